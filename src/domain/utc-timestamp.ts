import { daysInMonth, digits, fractionEnd } from '../contract/date-time';
import { isoDate } from './local-day';

// Timestamps are answered and stored as UTC text with a four-digit year (text that sorts in time order);
// an offset can carry 0000-01-01 or 9999-12-31 outside those years, where toISOString writes "-000001" or "+010000".
const FIRST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
export const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** A timestamp as stored, UTC text, and the instant (ms) it names. */
export interface UtcInstant {
  text: string;
  ms: number;
}

/**
 * An instant as `Date.parse` reads it, in UTC as `toISOString` writes it (`YYYY-MM-DDTHH:MM:SS.sssZ`), with
 * the instant itself; undefined for what it cannot read (a leap second among them) and for instants outside
 * the years 0000 to 9999. Every event's timestamp passes here: the usual shapes (`Z` or `±hh:mm`, a real date
 * and time) are read and written by hand, without a Date (make bench-steps: 0.26-0.29 ms per 1,000 of its
 * events against 0.72-0.73), and a timestamp already in UTC with milliseconds comes back as it is.
 * test/utc-timestamp.test.ts holds both ways to the same answers.
 */
export function utcInstant(value: string): UtcInstant | undefined {
  const byHand = commonShapeMs(value);
  const ms = byHand ?? Date.parse(value);
  if (Number.isNaN(ms) || ms < FIRST_INSTANT || ms > LAST_INSTANT) return undefined;
  // Already as toISOString writes it: three digits of milliseconds and Z.
  if (byHand !== undefined && value.length === 24 && value.charCodeAt(19) === 0x2e && value.charCodeAt(23) === 0x5a)
    return { text: value, ms };
  return { text: isoOf(ms), ms };
}

/**
 * The instant (ms) of a timestamp utcInstant wrote, as events are stored: read by hand, as utcInstant reads
 * it, for the rollups read the instant of every stored event they read back and sum (79 ns a call against
 * Date.parse's 155, measured over 60,000 new strings).
 */
export function instantOf(utc: string): number {
  return commonShapeMs(utc) ?? Date.parse(utc);
}

/**
 * The instant (ms) of `YYYY-MM-DDTHH:MM:SS[.f](Z|±hh:mm)` with a real date, hours to 23, minutes and seconds
 * to 59, one to nine digits of a second and an offset within ±23:59; undefined for any other shape, which
 * Date.parse reads instead. Digits of a second past the third are dropped, as Date.parse drops them.
 */
function commonShapeMs(value: string): number | undefined {
  if (value.length < 20 || value.charCodeAt(10) !== 0x54 || value.charCodeAt(4) !== 0x2d || value.charCodeAt(7) !== 0x2d) return undefined;
  if (value.charCodeAt(13) !== 0x3a || value.charCodeAt(16) !== 0x3a) return undefined;
  const year = digits(value, 0, 4);
  const month = digits(value, 5, 2);
  const day = digits(value, 8, 2);
  const hour = digits(value, 11, 2);
  const minute = digits(value, 14, 2);
  const second = digits(value, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  const secondsEnd = fractionEnd(value, 19);
  const fractionDigits = secondsEnd > 19 ? secondsEnd - 20 : 0;
  // Past nine digits V8 reads a fraction its own way (.0008000000 is 8 ms): left to it.
  if (secondsEnd < 0 || fractionDigits > 9) return undefined;
  const read = Math.min(fractionDigits, 3);
  const millis = read === 0 ? 0 : digits(value, 20, read) * 10 ** (3 - read);
  const offsetMinutes = zoneOffsetMinutes(value, secondsEnd);
  if (offsetMinutes === undefined) return undefined;
  return (daysFromCivil(year, month, day) * 1440 + hour * 60 + minute - offsetMinutes) * MINUTE_MS + second * 1000 + millis;
}

/** `Z` or `±hh:mm` from `at` to the end of `value`, as minutes east of UTC; undefined otherwise. */
function zoneOffsetMinutes(value: string, at: number): number | undefined {
  const zone = value.charCodeAt(at);
  if (zone === 0x5a) return at + 1 === value.length ? 0 : undefined;
  if ((zone !== 0x2b && zone !== 0x2d) || at + 6 !== value.length || value.charCodeAt(at + 3) !== 0x3a) return undefined;
  const hours = digits(value, at + 1, 2);
  const minutes = digits(value, at + 4, 2);
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return undefined;
  return (zone === 0x2d ? -1 : 1) * (hours * 60 + minutes);
}

// Days from 1970-01-01 to a proleptic Gregorian date and back, by whole 400-year eras (H. Hinnant's algorithms).
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

// The text is put together from strings made once: the day's date, shared with the rollups (isoDate), and the
// time's digits. Written out from its numbers piece by piece it took 6 % of the bytes the HTTP thread allocates
// (a sampling heap profile); make bench-steps: 0.27-0.36 ms per 1,000 of its events against 0.40-0.73 (four runs each).
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

/** An instant within the years 0000 to 9999 as toISOString writes it. */
function isoOf(ms: number): string {
  let rest = ms - Math.floor(ms / DAY_MS) * DAY_MS;
  const hour = Math.floor(rest / 3_600_000);
  rest -= hour * 3_600_000;
  const minute = Math.floor(rest / MINUTE_MS);
  rest -= minute * MINUTE_MS;
  const second = Math.floor(rest / 1000);
  const millis = rest - second * 1000;
  return `${isoDate(ms)}T${TWO_DIGITS[hour] ?? ''}:${TWO_DIGITS[minute] ?? ''}:${TWO_DIGITS[second] ?? ''}.${THREE_DIGITS[millis] ?? ''}Z`;
}
