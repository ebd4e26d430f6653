// Calendar days in an IANA time zone, as UTC instant ranges, with Intl alone:
// a day starts at the first instant whose local date is that day, so days
// around daylight-saving changes last 23 or 25 hours, and a zone whose clocks
// skip midnight starts its day at whatever local time comes first.

const formatters = new Map<string, Intl.DateTimeFormat>();

// Intl is asked for the zone's offset only, never for the date itself: it
// writes years in eras ("1" for year 0) and without padding ("999"), while a
// day here is an ISO date, with the expanded form (+010000-01-01) for the local
// days beyond 0000 to 9999 that an instant near either end can fall on.
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
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

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** The zone's offset from UTC at instant `ms` (ms), from Intl's "GMT+05:30" (seconds too, for local mean time). */
function offsetAt(ms: number, timeZone: string): number {
  const name = formatterFor(timeZone)
    .formatToParts(new Date(ms))
    .find((p) => p.type === 'timeZoneName')?.value;
  const match = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(name ?? '');
  if (!match) throw new Error(`unexpected UTC offset "${name}" in ${timeZone}`);
  const [, sign, hours = '0', minutes = '0', seconds = '0'] = match;
  return (sign === '-' ? -1 : 1) * ((Number(hours) * 60 + Number(minutes)) * MINUTE_MS + Number(seconds) * 1000);
}

// Dates by day number: the rollups ask for the date of every event they sum, and a batch's events share few days.
const datesByDay = new Map<number, string>();
const CACHED_DAYS = 100_000;

/** The ISO date of a UTC instant (ms): `YYYY-MM-DD`, or `±YYYYYY-MM-DD` outside years 0000 to 9999. */
export function isoDate(ms: number): string {
  return dateOfDay(Math.floor(ms / DAY_MS));
}

/** The ISO date of a day given as days since 1970-01-01 (as isoDate writes it). */
export function dateOfDay(day: number): string {
  let date = datesByDay.get(day);
  if (date === undefined) {
    if (datesByDay.size >= CACHED_DAYS) datesByDay.clear();
    const iso = new Date(day * DAY_MS).toISOString();
    date = iso.slice(0, iso.indexOf('T'));
    datesByDay.set(day, date);
  }
  return date;
}

/** Days since 1970-01-01 of an ISO date: days compare as numbers, since expanded years do not sort as text. */
function dayNumber(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / DAY_MS;
}

// Offsets by zone and minute: a batch's events share few minutes, and Intl is
// the slow part. A minute whose two ends have different offsets holds a
// transition, so each of its instants asks Intl (NaN); one whose ends agree has
// one offset throughout (no zone changes twice within a minute), and its
// instants' dates follow from it even where local mean time's offset in
// seconds starts a day inside the minute.
const offsetsByMinute = new Map<string, Map<number, number>>();
const CACHED_MINUTES = 100_000;

function cachedOffsetAt(ms: number, timeZone: string): number {
  let minutes = offsetsByMinute.get(timeZone);
  if (!minutes) offsetsByMinute.set(timeZone, (minutes = new Map()));
  const minute = Math.floor(ms / MINUTE_MS);
  let offset = minutes.get(minute);
  if (offset === undefined) {
    if (minutes.size >= CACHED_MINUTES) minutes.clear();
    const start = offsetAt(minute * MINUTE_MS, timeZone);
    offset = start === offsetAt(minute * MINUTE_MS + MINUTE_MS - 1, timeZone) ? start : NaN;
    minutes.set(minute, offset);
  }
  return Number.isNaN(offset) ? offsetAt(ms, timeZone) : offset;
}

/** The local day at instant `ms` in `timeZone`, as days since 1970-01-01 (dateOfDay names it). */
export function localDayNumber(ms: number, timeZone: string): number {
  return Math.floor((ms + cachedOffsetAt(ms, timeZone)) / DAY_MS);
}

/** The local date at instant `ms` in `timeZone`. */
export function localDate(ms: number, timeZone: string): string {
  return dateOfDay(localDayNumber(ms, timeZone));
}

// Offsets in use lie within ±14 hours of UTC (Kiribati, Baker Island); a margin beyond.
const MAX_OFFSET_SECONDS = 15 * 3600;
const SECOND_MS = 1000;

/**
 * The first instant (ms) whose local date in `timeZone` is `day` or later, by
 * bisection over whole seconds (local mean time, before standard zones, had
 * offsets in seconds): 17 steps instead of asking Intl for the zone's rules.
 */
function startOf(day: string, timeZone: string): number {
  const target = dayNumber(day);
  const utcMidnight = target * (DAY_MS / SECOND_MS);
  let low = utcMidnight - MAX_OFFSET_SECONDS; // local date before `day` here
  let high = utcMidnight + MAX_OFFSET_SECONDS; // and `day` or later here
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (dayNumber(localDate(mid * SECOND_MS, timeZone)) >= target) high = mid;
    else low = mid;
  }
  return high * SECOND_MS;
}

/** The day after `day`. */
export function nextDay(day: string): string {
  return dateOfDay(dayNumber(day) + 1);
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
  const count = dayNumber(localDate(Date.parse(through), timeZone)) - dayNumber(first);
  const days: { day: string; start: string }[] = [];
  for (let i = 0, day = first; i <= count; i++, day = nextDay(day))
    days.push({ day, start: new Date(startOf(day, timeZone)).toISOString() });
  return days;
}
