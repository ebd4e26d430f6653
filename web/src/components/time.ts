/** Dates and times in the organization's time zone (IANA), as every page shows them. */

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = timeZone + JSON.stringify(options);
  let f = formatters.get(key);
  if (!f) formatters.set(key, (f = new Intl.DateTimeFormat('en-GB', { timeZone, ...options })));
  return f;
}

export function formatTime(iso: string, timeZone: string): string {
  return formatter(timeZone, { hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date(iso));
}

export function formatDateTime(iso: string | null | undefined, timeZone: string, seconds = false): string {
  if (!iso) return '—';
  return formatter(timeZone, { dateStyle: 'medium', timeStyle: seconds ? 'medium' : 'short' }).format(new Date(iso));
}

export function formatDay(day: string): string {
  return formatter('UTC', { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }).format(new Date(`${day}T00:00:00Z`));
}

/** The offset of `timeZone` from UTC at `utcMillis`, in milliseconds. */
function offsetAt(utcMillis: number, timeZone: string): number {
  const parts = formatter(timeZone, {
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMillis));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second')) - utcMillis;
}

/** The instant a day (YYYY-MM-DD) starts in `timeZone` (daylight-saving days included). */
export function startOfDay(day: string, timeZone: string): Date {
  const wall = Date.parse(`${day}T00:00:00Z`);
  let utc = wall - offsetAt(wall, timeZone);
  utc = wall - offsetAt(utc, timeZone);
  return new Date(utc);
}

/** `day` shifted by `days` (calendar arithmetic, no time zone involved). */
export function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** [from, to) of a day in the organization's time zone, as the timeline's `from` and `to`. */
export function dayRange(day: string, timeZone: string): { from: string; to: string } {
  return { from: startOfDay(day, timeZone).toISOString(), to: startOfDay(addDays(day, 1), timeZone).toISOString() };
}

/** A duration in seconds, as people read it (1 h 5 min, 21 min, 45 s). */
export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const min = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (h) return min ? `${h} h ${min} min` : `${h} h`;
  if (min) return s ? `${min} min ${s} s` : `${min} min`;
  return `${s} s`;
}

/** A chart's time tick (unix seconds): the time of day, or the date at midnight. */
export function formatTick(seconds: number, timeZone: string): string {
  const date = new Date(seconds * 1000);
  const time = formatter(timeZone, { hour: '2-digit', minute: '2-digit' }).format(date);
  return time === '00:00' ? formatter(timeZone, { day: 'numeric', month: 'short' }).format(date) : time;
}
