// Calendar days in an IANA time zone, as UTC instant ranges, with Intl alone:
// a day starts at the first instant whose local date is that day, so days
// around daylight-saving changes last 23 or 25 hours, and a zone whose clocks
// skip midnight starts its day at whatever local time comes first.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether `timeZone` is an IANA zone name this runtime knows. */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The local date (`YYYY-MM-DD`) at instant `ms` in `timeZone`. */
export function localDate(ms: number, timeZone: string): string {
  const parts = formatterFor(timeZone).formatToParts(new Date(ms));
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

// Offsets in use lie within ±14 hours of UTC (Kiribati, Baker Island); a margin beyond.
const MAX_OFFSET_MINUTES = 15 * 60;
const MINUTE_MS = 60_000;

/**
 * The first instant (ms) whose local date in `timeZone` is `day` or later, by
 * bisection over whole minutes (offsets and their changes fall on minutes
 * since the 1970s): 11 steps instead of asking Intl for the zone's rules.
 */
function startOf(day: string, timeZone: string): number {
  const utcMidnight = Date.parse(`${day}T00:00:00Z`) / MINUTE_MS;
  let low = utcMidnight - MAX_OFFSET_MINUTES; // local date before `day` here
  let high = utcMidnight + MAX_OFFSET_MINUTES; // and `day` or later here
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (localDate(mid * MINUTE_MS, timeZone) >= day) high = mid;
    else low = mid;
  }
  return high * MINUTE_MS;
}

/** The day after `day` (`YYYY-MM-DD`). */
export function nextDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

/** The UTC instants `[from, to)` of calendar day `day` (`YYYY-MM-DD`) in `timeZone`. */
export function dayRange(day: string, timeZone: string): { from: string; to: string } {
  return { from: new Date(startOf(day, timeZone)).toISOString(), to: new Date(startOf(nextDay(day), timeZone)).toISOString() };
}

/** Today's date in `timeZone`. */
export function today(timeZone: string, now: Date = new Date()): string {
  return localDate(now.getTime(), timeZone);
}

/**
 * The local days in `timeZone` from the one of instant `from` to the one of
 * `through` (UTC ISO), each with the instant it starts (UTC ISO): an instant
 * belongs to the last day that starts at or before it. A day the zone skips
 * starts where the next one does.
 */
export function daysSpanned(from: string, through: string, timeZone: string): { day: string; start: string }[] {
  const first = localDate(Date.parse(from), timeZone);
  const count = Math.round((Date.parse(localDate(Date.parse(through), timeZone)) - Date.parse(first)) / 86_400_000);
  const days: { day: string; start: string }[] = [];
  for (let i = 0, day = first; i <= count; i++, day = nextDay(day))
    days.push({ day, start: new Date(startOf(day, timeZone)).toISOString() });
  return days;
}
