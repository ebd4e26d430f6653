import assert from 'node:assert/strict';
import { fullFormats } from 'ajv-formats/dist/formats';
import fc from 'fast-check';
import { isDateTime } from '../src/contract/date-time';
import { ContractValidators } from '../src/contract/validators';
import { sourceDocument } from '../src/contract/document-source';

// ajv-formats' own date-time check (full mode), which ours replaces: the two must admit exactly the same strings.
const theirs = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate;

const digits = (count: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: count, maxLength: count }).map((d) => d.join(''));
const twoDigits = (min: number, max: number) => fc.integer({ min, max }).map((n) => String(n).padStart(2, '0'));
/** Mostly a well-formed piece, sometimes one that is off. */
const piece = (good: fc.Arbitrary<string>, off: fc.Arbitrary<string>) =>
  fc.oneof({ weight: 8, arbitrary: good }, { weight: 1, arbitrary: off });
const anyTwoDigits = twoDigits(0, 99);
const zones = piece(
  fc.oneof(
    fc.constantFrom('Z', 'z'),
    fc.tuple(fc.constantFrom('+', '-'), twoDigits(0, 23), fc.constantFrom('', ':'), twoDigits(0, 59)).map((p) => p.join('')),
    fc.tuple(fc.constantFrom('+', '-'), twoDigits(0, 23)).map((p) => p.join('')),
  ),
  fc.oneof(
    fc.constantFrom('', '+', '-', 'Zz', 'UTC', '+05:', '+053', '+05::30', '+05;30', '+05:300'),
    fc.tuple(fc.constantFrom('+', '-'), anyTwoDigits, fc.constantFrom('', ':'), anyTwoDigits).map((p) => p.join('')),
  ),
);
/** Strings shaped like date-times, each piece now and then off in a way the format cares about. */
const nearDateTimes = fc
  .tuple(
    piece(
      fc.oneof(digits(4), fc.constantFrom('2024', '2023', '1900', '2000', '0000', '9999')),
      fc.constantFrom('202', '20245', '２０２４'),
    ),
    piece(fc.constant('-'), fc.constantFrom('/', '', '--')),
    piece(twoDigits(1, 12), fc.constantFrom('00', '13', '99', '1', 'a1')),
    piece(fc.constant('-'), fc.constantFrom('.', '')),
    piece(twoDigits(1, 31), fc.constantFrom('00', '32', '99', '1')),
    piece(fc.constantFrom('T', 't', ' '), fc.constantFrom('\u00a0', '\u2028', '\ufeff', '\t', '\n', '\u3000', 'x', '_', '', 'TT', 'T ')),
    piece(twoDigits(0, 23), fc.constantFrom('24', '99', '7')),
    piece(fc.constant(':'), fc.constantFrom('.', '')),
    piece(twoDigits(0, 59), fc.constantFrom('60', '99')),
    piece(fc.constant(':'), fc.constantFrom('', ';')),
    piece(twoDigits(0, 59), fc.constantFrom('60', '61', '99', '5')),
    piece(
      fc.oneof(
        fc.constant(''),
        fc
          .integer({ min: 1, max: 25 })
          .chain((n) => digits(n))
          .map((d) => `.${d}`),
      ),
      fc.constantFrom('.', '.9999999999999999999', '..5', ',5'),
    ),
    zones,
  )
  .map((parts) => parts.join(''));
/** Leap seconds and the minutes around them, in any zone: where theirs does arithmetic. */
const nearLeapSeconds = fc
  .tuple(
    twoDigits(0, 23),
    fc.constantFrom('59', '00', '29', '30'),
    fc.constantFrom('60', '59', '60.5', '60.9999999999999999', '59.9999999999999999'),
    fc
      .tuple(fc.constantFrom('+', '-'), twoDigits(0, 23), fc.constantFrom('', ':'), fc.constantFrom('00', '30', '59', '01'))
      .map((p) => p.join('')),
  )
  .map(([hour, minute, second, zone]) => `1990-12-31T${hour}:${minute}:${second}${zone}`);
/** A character inserted, removed or replaced somewhere. */
const mutated = fc
  .tuple(nearDateTimes, fc.nat(), fc.constantFrom('insert', 'remove', 'replace'), fc.constantFrom(...'0123456789-:.+ZzTt x\u00a0\u2029é'))
  .map(([value, position, how, char]) => {
    const at = position % (value.length + 1);
    if (how === 'insert') return value.slice(0, at) + char + value.slice(at);
    if (how === 'remove') return value.slice(0, at) + value.slice(at + 1);
    return value.slice(0, at) + char + value.slice(at + 1);
  });

describe('The date-time format', () => {
  it('admits exactly what ajv-formats admits, on strings shaped like date-times and on any strings', () => {
    let admitted = 0;
    fc.assert(
      fc.property(fc.oneof(nearDateTimes, nearLeapSeconds, mutated, fc.string()), (value) => {
        const expected = theirs(value);
        if (expected) admitted += 1;
        assert.equal(isDateTime(value), expected, JSON.stringify(value));
      }),
      { numRuns: 50_000 },
    );
    // The generated strings reach both answers often.
    assert.ok(admitted > 3_000 && admitted < 45_000, `${admitted} admitted`);
  });

  it('decides the edges as ajv-formats does: leap years and seconds, long fractions, separators, zones', () => {
    const cases = {
      '2024-02-29T00:00:00Z': true,
      '2023-02-29T00:00:00Z': false,
      '1900-02-29T00:00:00Z': false,
      '2000-02-29T00:00:00Z': true,
      '2024-04-31T00:00:00Z': false,
      '1990-12-31T23:59:60Z': true,
      '1990-12-31T15:59:60-08:00': true,
      '1990-12-31T23:59:60+01:00': false,
      '1990-12-31T23:59:60.5Z': true,
      '1990-12-31T23:59:60.99999999999999999Z': false,
      '2024-01-01T10:00:59.99999999999999999Z': false,
      '2024-01-01T10:00:59.999Z': true,
      '2024-01-01t10:00:00z': true,
      '2024-01-01 10:00:00+0530': true,
      '2024-01-01\u00a010:00:00+05': true,
      '2024-01-01T10:00:00': false,
      '2024-01-01T10:00:00+24:00': false,
      '2024-01-01T10:00:00+05:60': false,
      '2024-01-01T10:00:00.Z': false,
      '2024-01-01TT10:00:00Z': false,
      '2024-01-01T10:00:00Z ': false,
    };
    for (const [value, expected] of Object.entries(cases)) {
      assert.equal(theirs(value), expected, `ajv-formats on ${value}`);
      assert.equal(isDateTime(value), expected, value);
    }
  });

  it("still rejects a day that does not exist in the contract's Timestamp", () => {
    const validate = new ContractValidators(sourceDocument()).item('Timestamp');
    assert.equal(validate('2024-02-29T00:00:00Z'), undefined);
    assert.equal(validate('2023-02-29T00:00:00Z')?.keyword, 'format');
  });
});
