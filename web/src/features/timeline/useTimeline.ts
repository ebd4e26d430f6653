import { useMemo } from 'react';
import type { components } from '../../../../generated/openapi';
import { $api, cursorPages, pollMs } from '../../api/query';
import { dayRange } from '../../components/time';
import { underWorkerHeadings, type ListItem, type TimelineRow } from './rows';

const pageSize = 100;

export interface TimelineFilters {
  appId?: string;
  workerId?: string;
  eventType?: string;
  category?: components['schemas']['EventCategory'];
}

/** What the list shows, and how it gets more. */
export interface TimelineView {
  items: ListItem[];
  /** Apps of the rows loaded so far (for the app filter of a member, who cannot list apps). */
  apps: components['schemas']['App'][];
  isPending: boolean;
  isError: boolean;
  error: unknown;
  refetch: () => unknown;
  isEmpty: boolean;
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  fetchNextPage: () => unknown;
}

function appsOf(rows: TimelineRow[]) {
  return [...new Map(rows.map((r) => [r.app.id, r.app])).values()];
}

/**
 * A day grouped per worker, the most recently active first, each with their newest rows; the whole
 * loaded day is fetched again every few seconds, so new rows (and newly active workers) arrive.
 */
export function useGroupedDay(day: string): TimelineView {
  const groups = $api.useInfiniteQuery(
    'get',
    '/api/v1/console/timeline/workers',
    { params: { query: { day, limit: 50 } } },
    { ...cursorPages, refetchInterval: pollMs },
  );
  return useMemo(() => {
    const seen = new Set<string>();
    const items: ListItem[] = [];
    const rows: TimelineRow[] = [];
    for (const group of groups.data?.pages.flatMap((p) => p.items) ?? []) {
      // A worker active again between two pages' fetches can be in both: keep the newer.
      if (seen.has(group.worker.id)) continue;
      seen.add(group.worker.id);
      items.push({ kind: 'worker', key: `w-${group.worker.id}`, worker: group.worker, count: group.count, latestAt: group.latestAt });
      for (const row of group.rows) items.push({ kind: 'row', key: row.id, row });
      if (group.count > group.rows.length)
        items.push({ kind: 'more', key: `m-${group.worker.id}`, worker: group.worker, count: group.count });
      rows.push(...group.rows);
    }
    return {
      items,
      apps: appsOf(rows),
      isPending: groups.isPending,
      isError: groups.isError,
      error: groups.error,
      refetch: groups.refetch,
      isEmpty: groups.isSuccess && items.length === 0,
      hasNextPage: groups.hasNextPage,
      isFetchingNextPage: groups.isFetchingNextPage,
      fetchNextPage: groups.fetchNextPage,
    };
  }, [
    groups.data,
    groups.isPending,
    groups.isError,
    groups.error,
    groups.isSuccess,
    groups.refetch,
    groups.hasNextPage,
    groups.isFetchingNextPage,
    groups.fetchNextPage,
  ]);
}

/**
 * Every row of a day that matches the filters, newest first, a page at a time. New rows come from a
 * second request polling what is newer than the newest row loaded, so the pages already loaded are
 * never fetched again.
 */
export function useFilteredDay(day: string, timeZone: string, filters: TimelineFilters, headings: boolean): TimelineView {
  const query = { ...dayRange(day, timeZone), ...filters };
  const pages = $api.useInfiniteQuery('get', '/api/v1/console/timeline', { params: { query: { ...query, limit: pageSize } } }, cursorPages);
  const newest = pages.data?.pages[0]?.items[0]?.timestamp;
  const fresh = $api.useQuery(
    'get',
    '/api/v1/console/timeline',
    { params: { query: { ...query, from: newest ?? query.from, limit: 200 } } },
    { enabled: pages.isSuccess, refetchInterval: pollMs, staleTime: 0 },
  );
  return useMemo(() => {
    const loaded = pages.data?.pages.flatMap((p) => p.items) ?? [];
    const known = new Set(loaded.map((r) => r.id));
    const rows = [...(fresh.data?.items ?? []).filter((r) => !known.has(r.id)), ...loaded];
    return {
      items: underWorkerHeadings(rows, headings),
      apps: appsOf(rows),
      isPending: pages.isPending,
      isError: pages.isError,
      error: pages.error,
      refetch: pages.refetch,
      isEmpty: pages.isSuccess && rows.length === 0,
      hasNextPage: pages.hasNextPage,
      isFetchingNextPage: pages.isFetchingNextPage,
      fetchNextPage: pages.fetchNextPage,
    };
  }, [
    pages.data,
    fresh.data,
    headings,
    pages.isPending,
    pages.isError,
    pages.error,
    pages.isSuccess,
    pages.refetch,
    pages.hasNextPage,
    pages.isFetchingNextPage,
    pages.fetchNextPage,
  ]);
}
