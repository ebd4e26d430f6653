import assert from 'node:assert/strict';
import fc from 'fast-check';
import { normalizedInstant, normalizeTimestamp } from '../src/domain/judgement';
import { instantOf, utcInstant } from '../src/domain/utc-timestamp';
import { mutated, nearDateTimes, nearLeapSeconds } from './support/date-time-strings';

/** The stored text of a timestamp. */
const utcText = (value: string) => utcInstant(value)?.text;

const FIRST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/** What the hand-written reading replaces: Date.parse, the years 0000 to 9999, toISOString. */
function viaDate(value: string): string | undefined {
  const ms = Date.parse(value);
  return Number.isNaN(ms) || ms < FIRST_INSTANT || ms > LAST_INSTANT ? undefined : new Date(ms).toISOString();
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Any instant from a day before the year 0000 to a day after 9999, written in a zone with 0 to 12 digits of a second. */
const writtenInstants = fc
  .tuple(
    fc.integer({ min: FIRST_INSTANT - 86_400_000, max: LAST_INSTANT + 86_400_000 }),
    fc.oneof(fc.constant(0), fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 })),
    fc.integer({ min: 0, max: 12 }),
    fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 9, maxLength: 9 }),
    fc.boolean(),
  )
  .map(([utcMs, offset, fractionDigits, moreDigits, zulu]) => {
    const local = new Date(utcMs + offset * 60_000);
    const year = local.getUTCFullYear();
    const millis = pad(local.getUTCMilliseconds(), 3) + moreDigits;
    const fraction = fractionDigits === 0 ? '' : `.${millis.slice(0, fractionDigits)}`;
    const sign = offset < 0 ? '-' : '+';
    const zone = offset === 0 && zulu ? 'Z' : `${sign}${pad(Math.floor(Math.abs(offset) / 60), 2)}:${pad(Math.abs(offset) % 60, 2)}`;
    const date = `${year < 0 ? '-' : ''}${pad(Math.abs(year), 4)}-${pad(local.getUTCMonth() + 1, 2)}-${pad(local.getUTCDate(), 2)}`;
    const time = `${pad(local.getUTCHours(), 2)}:${pad(local.getUTCMinutes(), 2)}:${pad(local.getUTCSeconds(), 2)}`;
    return `${date}T${time}${fraction}${zone}`;
  });

describe('Timestamps in UTC', () => {
  it('reads every string as Date.parse does and writes it as toISOString does, within the years 0000 to 9999', () => {
    let readByHand = 0;
    fc.assert(
      fc.property(fc.oneof(writtenInstants, nearDateTimes, nearLeapSeconds, mutated, fc.string()), (value) => {
        const expected = viaDate(value);
        if (expected !== undefined) readByHand += 1;
        assert.equal(utcText(value), expected, JSON.stringify(value));
        // The instant given with the text is the one the text names.
        assert.equal(utcInstant(value)?.ms, expected === undefined ? undefined : Date.parse(expected), JSON.stringify(value));
      }),
      { numRuns: 50_000 },
    );
    assert.ok(readByHand > 15_000, `${readByHand} readable`);
  });

  it('decides the edges as Date.parse does', () => {
    const cases: Record<string, string | undefined> = {
      '2026-11-26T10:00:00.123Z': '2026-11-26T10:00:00.123Z',
      '2026-11-26T10:00:00Z': '2026-11-26T10:00:00.000Z',
      '2026-11-26T10:00:00.5Z': '2026-11-26T10:00:00.500Z',
      '2026-11-26T10:00:00.04Z': '2026-11-26T10:00:00.040Z',
      '2026-11-26T10:00:00.99999Z': '2026-11-26T10:00:00.999Z',
      '2026-01-01T00:30:00+01:00': '2025-12-31T23:30:00.000Z',
      '2025-12-31T23:30:00-00:31': '2026-01-01T00:01:00.000Z',
      '2024-02-28T23:00:00-01:00': '2024-02-29T00:00:00.000Z',
      '2023-02-28T23:00:00-01:00': '2023-03-01T00:00:00.000Z',
      '2000-02-29T12:00:00+23:59': '2000-02-28T12:01:00.000Z',
      '0000-01-01T00:00:00Z': '0000-01-01T00:00:00.000Z',
      '0000-01-01T00:59:59.999+01:00': undefined,
      '0000-01-01T01:00:00+01:00': '0000-01-01T00:00:00.000Z',
      '0999-03-01T00:00:00.007Z': '0999-03-01T00:00:00.007Z',
      '9999-12-31T23:59:59.999Z': '9999-12-31T23:59:59.999Z',
      '9999-12-31T23:59:59.999-00:01': undefined,
      '1990-12-31T23:59:60Z': undefined,
      '2026-11-26T10:00:00+24:00': undefined,
      '2026-11-26T10:00:00.Z': undefined,
      '1970-01-01T00:00:00.0008000000+00:00': '1970-01-01T00:00:00.008Z',
      // Other shapes are Date.parse's own: a lower-case zone, a space, a day past the month's end.
      '2026-11-26t10:00:00z': '2026-11-26T10:00:00.000Z',
      '2026-11-26 10:00:00Z': '2026-11-26T10:00:00.000Z',
      '2026-02-30T00:00:00Z': '2026-03-02T00:00:00.000Z',
    };
    for (const [value, expected] of Object.entries(cases)) {
      assert.equal(viaDate(value), expected, `Date.parse on ${value}`);
      assert.equal(utcText(value), expected, value);
    }
  });

  it('reads the instant of every timestamp it writes as Date.parse does', () => {
    fc.assert(
      fc.property(fc.integer({ min: FIRST_INSTANT, max: LAST_INSTANT }), (ms) => {
        const written = utcText(new Date(ms).toISOString());
        assert.ok(written !== undefined);
        assert.equal(instantOf(written), ms, written);
      }),
      { numRuns: 20_000 },
    );
  });

  it('gives the time received for an absent timestamp', () => {
    const receivedAt = new Date('2026-11-26T21:00:00.250Z');
    assert.equal(normalizeTimestamp(undefined, receivedAt), '2026-11-26T21:00:00.250Z');
    assert.equal(normalizeTimestamp('2026-11-26T22:00:00+01:00', receivedAt), '2026-11-26T21:00:00.000Z');
    assert.deepEqual(normalizedInstant(undefined, receivedAt), { text: '2026-11-26T21:00:00.250Z', ms: receivedAt.getTime() });
  });
});
