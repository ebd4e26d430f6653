import { useEffect } from 'react';
import type { components } from '../../../../generated/openapi';
import { $api } from '../../api/query';
import { Empty } from '../../components/States';
import { QueryView } from '../../components/QueryView';
import { formatDay } from '../../components/time';
import { FirstEvent } from './FirstEvent';
import type { WorkerRef } from './rows';
import { TimelineList } from './TimelineList';
import { useFilteredDay, useGroupedDay, type TimelineFilters, type TimelineView } from './useTimeline';

const hasFilters = (f: TimelineFilters) => Object.values(f).some((v) => v !== undefined);

/** Nothing on this day: a new organization (no worker yet) is told how to send its first event. */
function NothingThatDay({ day, filtered }: { day: string; filtered: boolean }) {
  const workers = $api.useQuery('get', '/api/v1/console/workers', { params: { query: { limit: 1 } } }, { enabled: !filtered });
  if (!filtered && workers.data?.items.length === 0) return <FirstEvent />;
  return (
    <Empty title={`Nothing on ${formatDay(day)}`}>
      <p>{filtered ? 'No row of this day matches.' : 'No event or snapshot arrived that day. Try another day.'}</p>
    </Empty>
  );
}

type App = components['schemas']['App'];

interface ListProps {
  day: string;
  timeZone: string;
  label: string;
  onWorkerFilter?: (worker: WorkerRef) => void;
  /** The apps of the rows loaded, for the app filter of a member (who cannot list the apps). */
  onApps?: (apps: App[]) => void;
}

function DayList({ view, day, filtered, onApps, ...list }: ListProps & { view: TimelineView; filtered: boolean }) {
  useEffect(() => onApps?.(view.apps), [onApps, view.apps]);
  return (
    <QueryView
      query={{ ...view, data: view }}
      what="the timeline"
      isEmpty={(v) => v.isEmpty}
      empty={<NothingThatDay day={day} filtered={filtered} />}
    >
      {() => <TimelineList view={view} {...list} />}
    </QueryView>
  );
}

/**
 * One day of the timeline: grouped per worker (their newest rows) when nothing is filtered, else
 * every matching row, newest first. `headings: false` for one worker's own page.
 */
export function DayTimeline({
  filters,
  headings = true,
  ...list
}: Omit<ListProps, 'label'> & { filters: TimelineFilters; headings?: boolean }) {
  const label = `Timeline of ${formatDay(list.day)}, newest first`;
  return hasFilters(filters) || !headings ? (
    <FilteredDay {...list} label={label} filters={filters} headings={headings} />
  ) : (
    <GroupedDay {...list} label={label} />
  );
}

function GroupedDay(props: ListProps) {
  return <DayList view={useGroupedDay(props.day)} filtered={false} {...props} />;
}

function FilteredDay({ filters, headings, ...props }: ListProps & { filters: TimelineFilters; headings: boolean }) {
  return <DayList view={useFilteredDay(props.day, props.timeZone, filters, headings)} filtered {...props} />;
}
