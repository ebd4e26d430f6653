import fc from 'fast-check';
import { fullFormats } from 'ajv-formats/dist/formats';
import { holds, isPlainObject, merge, typeOf, type Path, type Schema, type SchemaModel } from './schema-model';

export interface ArbitraryOptions {
  /**
   * Arbitraries used instead of the schema's at these paths ('*' stands for any
   * item or map entry), for what a schema cannot say: which event types are on
   * the whitelist, which workers exist, which statistic ids the manifest has.
   */
  overrides?: Record<string, fc.Arbitrary<unknown>>;
  /** At most this many array items, whatever maxItems allows: small batches keep runs fast. */
  maxItems?: number;
  /** At most this many entries in maps and free-form objects. */
  maxProperties?: number;
}

/** Characters a string is made of: mostly printable ASCII, often the ones that break things, sometimes any code point. */
export const hostileCharacters = [
  '\u0000',
  '\ud800',
  '\udfff',
  '😀',
  '\u202e',
  '\u200f',
  'م',
  '\u200b',
  '\ufeff',
  '\u0301',
  '\uffff',
  '"',
  '\\',
  '\n',
  '\u2028',
];
const textUnit = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)) },
  { weight: 2, arbitrary: fc.constantFrom(...hostileCharacters) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x10ffff }).map((code) => String.fromCodePoint(code)) },
);

const email = fullFormats.email as RegExp;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] as number;
}

const anyDate = fc
  .tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1, max: 12 }))
  .chain(([year, month]) => fc.integer({ min: 1, max: daysIn(year, month) }).map((day) => `${pad(year, 4)}-${pad(month)}-${pad(day)}`));

/** The instant an RFC 3339 date-time names, in ms, worked out without Date.parse (a space for T and ±hhmm as the format admits). */
export function instantOf(dateTime: string): number {
  const m = /^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:[Zz]|([+-])(\d\d):?(\d\d))$/.exec(dateTime);
  if (!m) throw new Error(`not an RFC 3339 date-time: ${dateTime}`);
  const [, y, mo, d, h, mi, s, fraction = '0', sign, oh = '0', om = '0'] = m;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), Number(fraction.padEnd(3, '0').slice(0, 3)));
  const offsetMinutes = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  return date.getTime() - offsetMinutes * 60_000;
}

const firstInstant = instantOf('0000-01-01T00:00:00Z');
const lastInstant = instantOf('9999-12-31T23:59:59.999Z');

/**
 * RFC 3339 date-times, as `format: date-time` means: any real date of years
 * 0000 to 9999, any offset, either case of T and Z; and, as the contract's
 * Timestamp adds, an instant within those years in UTC. The first and last
 * days come often, where an offset brings the instant to the edge.
 */
export const dateTime: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof({ weight: 1, arbitrary: fc.constantFrom('0000-01-01', '9999-12-31') }, { weight: 4, arbitrary: anyDate }),
    fc.constantFrom('T', 't'),
    fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 })),
    fc.option(fc.stringMatching(/^\.\d{1,9}$/), { nil: '' }),
    fc.oneof(
      fc.constantFrom('Z', 'z'),
      fc
        .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([sign, h, m]) => `${sign}${pad(h)}:${pad(m)}`),
    ),
  )
  .map(([date, separator, [h, m, s], fraction, offset]) => `${date}${separator}${pad(h)}:${pad(m)}:${pad(s)}${fraction}${offset}`)
  .filter((value) => instantOf(value) >= firstInstant && instantOf(value) <= lastInstant);

const codePoints = (s: string) => Array.from(s).length;

/** Arbitraries of the values a contract schema accepts, built by walking the schema. */
export class SchemaArbitraries {
  private readonly overrides: Array<[string[], fc.Arbitrary<unknown>]>;
  private readonly maxItems: number;
  private readonly maxProperties: number;

  constructor(
    private readonly model: SchemaModel,
    options: ArbitraryOptions = {},
  ) {
    this.overrides = Object.entries(options.overrides ?? {}).map(([pattern, arbitrary]) => [pattern.split('/'), arbitrary]);
    this.maxItems = options.maxItems ?? 3;
    this.maxProperties = options.maxProperties ?? 4;
  }

  valid(schema: Schema, path: Path = []): fc.Arbitrary<unknown> {
    const override = this.overrides.find(
      ([pattern]) => pattern.length === path.length && pattern.every((p, i) => p === '*' || p === path[i]),
    );
    if (override) return override[1];
    const node = this.model.effective(schema);
    if (node.if) {
      const { if: condition, then, else: otherwise, ...rest } = node;
      return fc.oneof(
        this.valid(merge(merge(rest, condition), then ?? {}), path),
        this.valid(merge(rest, otherwise ?? {}), path).filter((value) => !holds(condition, value)),
      );
    }
    const branches = (node.oneOf ?? node.anyOf) as Schema[] | undefined;
    if (branches) {
      const { oneOf: _oneOf, anyOf: _anyOf, ...rest } = node;
      return fc.oneof(...branches.map((branch) => this.valid(merge(rest, this.model.effective(branch)), path)));
    }
    if ('const' in node) return fc.constant(node.const);
    if (node.enum) return fc.constantFrom(...(node.enum as unknown[]));
    switch (typeOf(node)) {
      case 'string':
        return this.string(node);
      case 'integer':
        return fc.integer({ min: node.minimum ?? Number.MIN_SAFE_INTEGER, max: node.maximum ?? Number.MAX_SAFE_INTEGER });
      case 'number':
        return fc.double({ min: node.minimum, max: node.maximum, noNaN: true, noDefaultInfinity: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return this.array(node, path);
      case 'object':
        return this.object(node, path);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private string(node: Schema): fc.Arbitrary<string> {
    const min = node.minLength ?? 0;
    const max = node.maxLength ?? Infinity;
    const fitsLength = (s: string) => codePoints(s) >= min && codePoints(s) <= max;
    if (node.format === 'date-time') return dateTime;
    if (node.format === 'email') return fc.emailAddress().filter((s) => email.test(s) && fitsLength(s));
    if (node.format) throw new Error(`format ${node.format} has no generator`);
    const text = fc.string({ unit: textUnit, minLength: min, maxLength: Math.min(max, 200) });
    if (!node.pattern) return text.filter(fitsLength);
    const pattern = new RegExp(node.pattern, 'u');
    const matches = (s: string) => pattern.test(s);
    let built: fc.Arbitrary<string>;
    try {
      built = fc.stringMatching(pattern);
    } catch {
      // fast-check cannot build from every pattern (Unicode properties such as \p{Cs}); those here admit most text.
      return text.filter((s) => matches(s) && fitsLength(s));
    }
    // Hostile text where the pattern admits it, otherwise a string built from the pattern (no filter that may never pass).
    return fc
      .tuple(text, built)
      .map(([t, matching]) => (matches(t) ? t : matching))
      .filter(fitsLength);
  }

  private array(node: Schema, path: Path): fc.Arbitrary<unknown[]> {
    const minLength = node.minItems ?? 0;
    const maxLength = Math.max(minLength, Math.min(node.maxItems ?? Infinity, this.maxItems));
    return fc.array(this.valid(node.items ?? {}, [...path, '*']), { minLength, maxLength });
  }

  private object(node: Schema, path: Path): fc.Arbitrary<Record<string, unknown>> {
    const properties = Object.entries<Schema>(node.properties ?? {});
    const minKeys = node.minProperties ?? 0;
    const maxKeys = Math.max(minKeys, Math.min(node.maxProperties ?? Infinity, this.maxProperties));
    let arbitrary: fc.Arbitrary<Record<string, unknown>>;
    if (properties.length) {
      const model = Object.fromEntries(properties.map(([key, schema]) => [key, this.valid(schema, [...path, key])]));
      arbitrary = fc.record(model, { requiredKeys: (node.required ?? []).filter((key: string) => key in model) });
    } else if (typeof node.additionalProperties === 'object') {
      const keys = node.propertyNames
        ? this.string({ type: 'string', ...node.propertyNames })
        : fc.string({ unit: textUnit, maxLength: 20 });
      arbitrary = fc.dictionary(keys, this.valid(node.additionalProperties, [...path, '*']), { minKeys, maxKeys, noNullPrototype: true });
    } else {
      arbitrary = fc.dictionary(fc.string({ unit: textUnit, maxLength: 20 }), fc.jsonValue({ maxDepth: 2 }), {
        maxKeys,
        noNullPrototype: true,
      });
    }
    const maxBytes = node['x-max-serialized-bytes'] as number | undefined;
    return arbitrary.filter((value) => {
      const count = Object.keys(value).length;
      return (
        isPlainObject(value) &&
        count >= minKeys &&
        count <= (node.maxProperties ?? Infinity) &&
        (!maxBytes || Buffer.byteLength(JSON.stringify(value)) <= maxBytes)
      );
    });
  }
}
