import assert from 'node:assert/strict';
import { fullFormats } from 'ajv-formats/dist/formats';
import fc from 'fast-check';
import { isDateTime } from '../src/contract/date-time';
import { ContractValidators } from '../src/contract/validators';
import { sourceDocument } from '../src/contract/document-source';
import { mutated, nearDateTimes, nearLeapSeconds } from './support/date-time-strings';

// ajv-formats' own date-time check (full mode), which ours replaces: the two must admit exactly the same strings.
const theirs = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate;

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
