import { useCallback, useState } from 'react';
import { useSearchParams } from 'wouter';
import type { components } from '../../../../generated/openapi';
import { $api } from '../../api/query';
import { Loading } from '../../components/States';
import { useTimeZone } from '../../components/useTimeZone';
import { useTitle } from '../../components/useTitle';
import { canAdminister, useSession } from '../auth/session';
import { DayPicker } from './DayPicker';
import { DayTimeline } from './DayTimeline';
import { Filters } from './Filters';
import { isCategory } from './rows';
import type { TimelineFilters } from './useTimeline';

/** The day and the filters live in the address: ?day=&app=&worker=&type=&category= */
function useTimelineAddress() {
  const [params, setParams] = useSearchParams();
  const category = params.get('category');
  const filters: TimelineFilters = {
    appId: params.get('app') ?? undefined,
    workerId: params.get('worker') ?? undefined,
    eventType: params.get('type') ?? undefined,
    category: isCategory(category) ? category : undefined,
  };
  const set = (day: string | undefined, f: TimelineFilters) => {
    const next = new URLSearchParams();
    const entries: Array<[string, string | undefined]> = [
      ['day', day],
      ['app', f.appId],
      ['worker', f.workerId],
      ['type', f.eventType],
      ['category', f.category],
    ];
    for (const [name, value] of entries) if (value) next.set(name, value);
    setParams(next);
  };
  return { day: params.get('day') ?? undefined, filters, set };
}

/** The organization's monitoring timeline: a day grouped per worker, filters, new rows as they arrive. */
export default function TimelinePage() {
  useTitle('Timeline');
  const session = useSession();
  const { timeZone, today } = useTimeZone();
  const address = useTimelineAddress();
  const apps = $api.useQuery('get', '/api/v1/console/apps', {}, { enabled: canAdminister(session) });
  const worker = $api.useQuery(
    'get',
    '/api/v1/console/workers/{workerId}',
    { params: { path: { workerId: address.filters.workerId ?? '' } } },
    { enabled: address.filters.workerId !== undefined },
  );
  // Owners and admins choose among all apps; a member among the apps seen on the day.
  const [seenApps, setSeenApps] = useState(new Map<string, components['schemas']['App']>());
  const onApps = useCallback(
    (more: components['schemas']['App'][]) =>
      setSeenApps((known) => (more.every((a) => known.has(a.id)) ? known : new Map([...known, ...more.map((a) => [a.id, a] as const)]))),
    [],
  );
  const day = address.day ?? today;
  const workerName = address.filters.workerId ? (worker.data?.displayName ?? '') : '';

  return (
    <>
      <div className="page-head">
        <h1>Timeline</h1>
        <span className="muted small">Times in {timeZone}</span>
      </div>
      {day === undefined || today === undefined || (address.filters.workerId && worker.isPending) ? (
        <Loading />
      ) : (
        <>
          <DayPicker day={day} today={today} onChange={(d) => address.set(d, address.filters)} />
          <Filters
            key={JSON.stringify(address.filters) + workerName}
            filters={address.filters}
            workerName={workerName}
            apps={apps.data?.items ?? [...seenApps.values()]}
            onApply={(f) => address.set(address.day, f)}
          />
          <DayTimeline
            key={day}
            day={day}
            timeZone={timeZone}
            filters={address.filters}
            onApps={onApps}
            onWorkerFilter={(w) => address.set(address.day, { ...address.filters, workerId: w.id })}
          />
        </>
      )}
    </>
  );
}
