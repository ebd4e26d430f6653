// The contract's "date-time" format, decided character by character. ajv-formats (full mode) splits the
// string on a regular expression and runs two more with captures, for every event's timestamp: a tenth of
// all the bytes ingest allocated (make bench, a sampling heap profile). Exactly the strings it admits pass:
// test/date-time-format.test.ts compares the two on generated strings.

/** ajv-formats' date-time in full mode: RFC 3339 with a time zone, a real date, a leap second at 23:59 UTC. */
export function isDateTime(value: string): boolean {
  // Theirs splits on `t` or any whitespace and wants two parts; the date part has exactly 10 characters,
  // none of them a separator, and the time part has none either.
  return value.length > 10 && isSeparator(value.charCodeAt(10)) && isDate(value) && isTime(value, 11);
}

const SEPARATOR = /^(?:t|\s)$/i;
const T = 0x54;
const t = 0x74;

function isSeparator(code: number): boolean {
  return code === T || code === t || SEPARATOR.test(String.fromCharCode(code));
}

const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** `YYYY-MM-DD` at the start of `value`: a month of the year and a day of that month. */
function isDate(value: string): boolean {
  if (value.charCodeAt(4) !== 0x2d || value.charCodeAt(7) !== 0x2d) return false;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  return year >= 0 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** The days of `month` (1 to 12) in `year`, leap years by the Gregorian rule. */
export function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (DAYS[month] ?? 0);
}

/** `hh:mm:ss[.f+]` and a zone (`Z`, `±hh`, `±hhmm` or `±hh:mm`) from `at` to the end of `value`. */
function isTime(value: string, at: number): boolean {
  if (value.charCodeAt(at + 2) !== 0x3a || value.charCodeAt(at + 5) !== 0x3a) return false;
  const hour = digits(value, at, 2);
  const minute = digits(value, at + 3, 2);
  const second = digits(value, at + 6, 2);
  if (hour < 0 || minute < 0 || second < 0) return false;
  const secondsEnd = fractionEnd(value, at + 8);
  if (secondsEnd < 0) return false;
  let p = secondsEnd;
  // A zone is required (theirs: strictTimeZone).
  const zone = value.charCodeAt(p);
  let sign = 1;
  let zoneHour = 0;
  let zoneMinute = 0;
  if (zone === 0x5a || zone === 0x7a) {
    p += 1;
  } else if (zone === 0x2b || zone === 0x2d) {
    sign = zone === 0x2d ? -1 : 1;
    zoneHour = digits(value, p + 1, 2);
    if (zoneHour < 0) return false;
    p += 3;
    if (p < value.length) {
      if (value.charCodeAt(p) === 0x3a) p += 1;
      zoneMinute = digits(value, p, 2);
      if (zoneMinute < 0) return false;
      p += 2;
    }
  } else {
    return false;
  }
  if (p !== value.length || zoneHour > 23 || zoneMinute > 59) return false;
  // Theirs compares the seconds as a number: a long fraction of 59 or 60 rounds up to the next second.
  const seconds = secondsEnd > at + 8 && (second === 59 || second === 60) ? Number(value.slice(at + 6, secondsEnd)) : second;
  if (hour <= 23 && minute <= 59 && seconds < 60) return true;
  // A leap second: 23:59:60 in UTC.
  const utcMinute = minute - zoneMinute * sign;
  const utcHour = hour - zoneHour * sign - (utcMinute < 0 ? 1 : 0);
  return (utcHour === 23 || utcHour === -1) && (utcMinute === 59 || utcMinute === -1) && seconds < 61;
}

/** Where the seconds end: after `.` and one digit or more when they follow at `at`; -1 for a `.` without digits. */
export function fractionEnd(value: string, at: number): number {
  if (value.charCodeAt(at) !== 0x2e) return at;
  let p = at + 1;
  while (isDigit(value.charCodeAt(p))) p += 1;
  return p === at + 1 ? -1 : p;
}

/** The number the `count` ASCII digits at `at` make; -1 if any of them is not one. */
export function digits(value: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i += 1) {
    const code = value.charCodeAt(i);
    if (!isDigit(code)) return -1;
    n = n * 10 + (code - 0x30);
  }
  return n;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}
