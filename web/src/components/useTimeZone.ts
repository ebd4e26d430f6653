import { $api } from '../api/query';

/**
 * The organization's time zone (IANA), in which every page shows days and times. The grouped
 * timeline is where any member reads it (the organization's settings are for owners and admins);
 * one group is enough.
 */
export function useTimeZone(): { timeZone: string; today: string | undefined } {
  const day = $api.useQuery('get', '/api/v1/console/timeline/workers', { params: { query: { limit: 1 } } }, { staleTime: 60_000 });
  const timeZone = day.data?.timeZone ?? 'UTC';
  return { timeZone, today: day.data ? todayIn(timeZone) : undefined };
}

/** Today's date (YYYY-MM-DD) in `timeZone`. */
export function todayIn(timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}
