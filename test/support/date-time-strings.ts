import fc from 'fast-check';

// Strings shaped like RFC 3339 date-times, for the tests that hold a hand-written reading of them to a reference.

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
export const nearDateTimes = fc
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
export const nearLeapSeconds = fc
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
export const mutated = fc
  .tuple(nearDateTimes, fc.nat(), fc.constantFrom('insert', 'remove', 'replace'), fc.constantFrom(...'0123456789-:.+ZzTt x\u00a0\u2029é'))
  .map(([value, position, how, char]) => {
    const at = position % (value.length + 1);
    if (how === 'insert') return value.slice(0, at) + char + value.slice(at);
    if (how === 'remove') return value.slice(0, at) + value.slice(at + 1);
    return value.slice(0, at) + char + value.slice(at + 1);
  });
