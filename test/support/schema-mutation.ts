import fc from 'fast-check';
import { Entries, Raw, encodeJson } from './json-text';
import { hostileCharacters } from './schema-arbitrary';
import { isPlainObject, typeOf, type Schema, type SchemaModel } from './schema-model';

/** A valid body with one of its values replaced by a hostile one. */
export interface Mutant {
  /** The valid body it was made from. */
  original: unknown;
  /** Where the replaced value sits, as a JSON pointer. */
  at: string;
  /** What was done there, e.g. "length 201 (bounds 1..200)" or "duplicate key actor (hostile one last)". */
  kind: string;
  body: unknown;
}

interface Site {
  path: Array<string | number>;
  schema: Schema;
  value: unknown;
}

interface Mutation {
  kind: string;
  value: unknown;
}

const unicodeStrings = [
  '\ud800',
  '\udfff',
  'a\udc00b',
  '\udbff\udfff',
  '👩‍💻',
  '🏳️‍🌈',
  '\u202eevil\u202c',
  'مرحبا بالعالم',
  'שלום',
  '\u0000',
  'nul\u0000inside',
  '\u200b',
  '\ufeff',
  'e\u0301\u0301\u0301',
  '\uffff',
  '\ufffe',
  '１２３',
  'İ',
  'ß',
  '\u2028\u2029',
  '\t\r\n',
  '<script>',
  "'; drop table events; --",
];
const nanLikeStrings = ['NaN', 'Infinity', '-Infinity', '1e400', '-0', '0x10', '1_000', ' 42', '42 ', '', 'null', 'true', 'undefined'];
const rawNumbers = [
  '1e400',
  '-1e400',
  '-0',
  '-0.0',
  '0e0',
  '1E2',
  '4e-400',
  '1.0',
  '100000000000000000000000',
  '9007199254740993',
  '0.1e1',
  '1e-7',
];
const prototypeKeys = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf'];
const invalidUtf8 = [[0xff], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xe2, 0x82]];
const wrongTypes: unknown[] = [null, true, false, 0, -1, 1.5, '', 'text', [], {}, [null], { value: 1 }];
const nearMissDateTimes = [
  '2026-02-30T00:00:00Z',
  '2026-06-30T23:59:60Z',
  '2026-11-20T14:03:11',
  '2026-11-20T14:03:11+01',
  '2026-11-20T14:03:11+0100',
  '2026-11-20 14:03:11Z',
  '2026-11-20T24:00:00Z',
  '2026-11-20T14:03:11.Z',
  '+275760-09-13T00:00:00Z',
  '10000-01-01T00:00:00Z',
  '0000-01-01T00:00:00+00:01',
  '9999-12-31T23:59:59-00:01',
  '2026-11-20T14:03:11+24:00',
  'yesterday',
  '2026-W47-5',
  '1970-01-01T00:00:00Z',
];
const nearMissEmails = [
  'a@b',
  '@x.io',
  'a@',
  'a@@x.io',
  'a b@x.io',
  'ü@x.io',
  'a@x.io\u0000',
  'A@X.IO',
  `${'a'.repeat(64)}@${'b'.repeat(60)}.${'c'.repeat(200)}.io`,
];

/** JSON nested `depth` levels deep, as arrays or objects. */
function nested(depth: number, kind: 'array' | 'object'): Raw {
  const text = kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  return Raw.text(text, `${kind} nested ${depth} deep`);
}

function huge(unit: string, count: number): Raw {
  return Raw.text(JSON.stringify(unit.repeat(count)), `${JSON.stringify(unit)}×${count}`);
}

function ofLength(value: unknown, length: number): string {
  const chars = Array.from(typeof value === 'string' && value ? value : 'a');
  const filler = chars[chars.length - 1] as string;
  return length <= chars.length ? chars.slice(0, length).join('') : chars.join('') + filler.repeat(length - chars.length);
}

const pick = (kind: string, values: unknown[]) => fc.constantFrom(...values).map((value) => ({ kind, value }));

/** Replacements for a value of any schema, built once. */
const anyValue: Array<fc.Arbitrary<Mutation>> = [
  pick('wrong type', wrongTypes),
  pick(
    'hostile number',
    rawNumbers.map((n) => Raw.text(n)),
  ),
  pick('NaN-like string', nanLikeStrings),
  pick(
    'invalid UTF-8',
    invalidUtf8.map(
      (bytes) =>
        new Raw(
          Buffer.concat([Buffer.from('"a'), Buffer.from(bytes), Buffer.from('b"')]),
          `"a${bytes.map((b) => `\\x${b.toString(16)}`).join('')}b"`,
        ),
    ),
  ),
];

/** Replacements of up to a megabyte: drawn half as often as the others, so that a run stays within its time. */
const heavyValue: Array<fc.Arbitrary<Mutation>> = [
  pick(
    'deep nesting',
    [64, 1_000, 10_000, 100_000, 400_000].flatMap((depth) => [nested(depth, 'array'), nested(depth, 'object')]),
  ),
  pick('huge string', [huge('x', 16_385), huge('x', 200_000), huge('😀', 100_000), huge('x', 1_100_000)]),
];
const defined = <T>(values: Array<T | undefined>): T[] => values.filter((v): v is T => v !== undefined);

/**
 * Hostile variants of valid bodies, one value at a time, derived from the
 * keywords of the schema that value answers to: its type, bounds, enum,
 * pattern, format, required and additional properties.
 */
export class SchemaMutations {
  constructor(private readonly model: SchemaModel) {}

  /** Each valid body with one value (the body itself, a property, an item, a map entry) replaced. */
  of(schema: Schema, valid: fc.Arbitrary<unknown>): fc.Arbitrary<Mutant> {
    return valid.chain((original) => {
      const sites = this.sites(schema, original, []);
      return fc.integer({ min: 0, max: sites.length - 1 }).chain((i) => {
        const site = sites[i] as Site;
        return this.mutations(site).map(({ kind, value }) => mutant(original, site.path, kind, replaceAt(original, site.path, value)));
      });
    });
  }

  private sites(schema: Schema, value: unknown, path: Array<string | number>): Site[] {
    const node = this.model.applied(schema, value);
    const here: Site = { path, schema: node, value };
    if (Array.isArray(value)) return [here, ...value.flatMap((item, i) => this.sites(node.items ?? {}, item, [...path, i]))];
    if (isPlainObject(value))
      return [here, ...Object.entries(value).flatMap(([key, item]) => this.sites(this.model.member(node, key), item, [...path, key]))];
    return [here];
  }

  private mutations({ schema, value }: Site): fc.Arbitrary<Mutation> {
    const type = typeOf(schema);
    const options = [...anyValue];
    if (type === 'string' || typeof value === 'string') options.push(...this.stringMutations(schema, value));
    if (type === 'integer' || type === 'number') options.push(this.numberBoundaries(schema));
    if (schema.enum) options.push(this.enumMisses(schema));
    if (Array.isArray(value)) options.push(this.arrayBoundaries(schema, value));
    if (isPlainObject(value)) options.push(...this.objectMutations(schema, value));
    return fc.oneof(
      ...options.map((arbitrary) => ({ arbitrary, weight: 2 })),
      ...heavyValue.map((arbitrary) => ({ arbitrary, weight: 1 })),
    );
  }

  private stringMutations(schema: Schema, value: unknown): Array<fc.Arbitrary<Mutation>> {
    const text = typeof value === 'string' ? value : '';
    const { minLength = 0, maxLength } = schema;
    const lengths = defined([minLength - 1, minLength, maxLength, maxLength === undefined ? undefined : maxLength + 1]).filter(
      (n) => n >= 0,
    );
    const options = [
      pick('unicode', [...unicodeStrings, ...unicodeStrings.map((u) => text + u), ...unicodeStrings.map((u) => u + text)]),
      fc.constantFrom(...hostileCharacters).chain((char) =>
        fc.nat(Array.from(text).length).map((at) => {
          const chars = Array.from(text);
          chars.splice(at, 1, char);
          return { kind: 'one character replaced', value: chars.join('') };
        }),
      ),
    ];
    if (lengths.length)
      options.push(
        fc
          .constantFrom(...lengths)
          .map((n) => ({ kind: `length ${n} (bounds ${minLength}..${maxLength ?? ''})`, value: ofLength(text, n) })),
      );
    if (schema.pattern) {
      // A fixed list filtered once: a filter on random strings may never pass for a pattern that admits nearly everything.
      const pattern = new RegExp(schema.pattern, 'u');
      const candidates = [
        '',
        ' ',
        `${text} `,
        text.toUpperCase(),
        'x'.repeat(70),
        ...hostileCharacters.flatMap((c) => [c, text + c, c + text]),
      ];
      const breaking = candidates.filter((candidate) => !pattern.test(candidate));
      if (breaking.length) options.push(pick('breaks pattern', breaking));
    }
    if (schema.format === 'date-time') options.push(pick('date-time near miss', nearMissDateTimes));
    if (schema.format === 'email') options.push(pick('email near miss', nearMissEmails));
    return options;
  }

  private numberBoundaries(schema: Schema): fc.Arbitrary<Mutation> {
    const { minimum, maximum } = schema;
    const values = defined([
      minimum,
      minimum === undefined ? undefined : minimum - 1,
      minimum === undefined ? undefined : minimum - 0.5,
      maximum,
      maximum === undefined ? undefined : maximum + 1,
      maximum === undefined ? undefined : maximum + 0.5,
      0.5,
      Number.MAX_SAFE_INTEGER + 2,
      -Number.MAX_SAFE_INTEGER - 2,
      Number.MAX_VALUE,
      -Number.MAX_VALUE,
      Number.MIN_VALUE,
    ]);
    return pick(`number boundary (bounds ${minimum ?? ''}..${maximum ?? ''})`, values);
  }

  private enumMisses(schema: Schema): fc.Arbitrary<Mutation> {
    const values = (schema.enum as unknown[]).filter((v): v is string => typeof v === 'string');
    const otherSets = Object.values<string[]>(schema['x-category-sets'] ?? {}).flat();
    const misses = values.flatMap((v) => [v.toLowerCase(), v.toUpperCase(), `${v} `, ` ${v}`, `${v}\u0000`, `\u200b${v}`]);
    return pick(
      'enum near miss',
      [...misses, ...otherSets, ''].filter((v) => !values.includes(v)),
    );
  }

  private arrayBoundaries(schema: Schema, value: unknown[]): fc.Arbitrary<Mutation> {
    const { minItems = 0, maxItems } = schema;
    const counts = defined([minItems - 1, minItems, 0, maxItems, maxItems === undefined ? undefined : maxItems + 1]).filter((n) => n >= 0);
    const filler = value.length ? value : [null];
    return fc.constantFrom(...counts).map((n) => ({
      kind: `${n} items (bounds ${minItems}..${maxItems ?? ''})`,
      value: Array.from({ length: n }, (_, i) => filler[i % filler.length]),
    }));
  }

  private objectMutations(schema: Schema, value: Record<string, unknown>): Array<fc.Arbitrary<Mutation>> {
    const entries = Object.entries(value);
    const keys = Object.keys(value);
    const hostileValue = fc.oneof(fc.constantFrom<unknown>(null, { polluted: true }, 'x', 1), fc.jsonValue({ maxDepth: 2 }));
    const newKey = fc.oneof(
      fc.constantFrom('unknown', '', ' ', 'a b', 'x'.repeat(65), '\ud800', '😀', ...prototypeKeys),
      fc.string({ maxLength: 10 }),
    );
    const options: Array<fc.Arbitrary<Mutation>> = [
      fc
        .tuple(newKey, hostileValue)
        .map(([key, item]) => ({ kind: `property ${JSON.stringify(key)} added`, value: new Entries([...entries, [key, item]]) })),
      fc.constantFrom(...prototypeKeys).map((key) => ({
        kind: `${key} pollution`,
        value: new Entries([[key, { polluted: true, prototype: { polluted: true } }], ...entries]),
      })),
      fc.constant({ kind: 'wrapped in __proto__', value: new Entries([['__proto__', value]]) }),
    ];
    if (keys.length) {
      options.push(
        fc
          .constantFrom(...keys)
          .map((key) => ({ kind: `property ${key} removed`, value: Object.fromEntries(entries.filter(([k]) => k !== key)) })),
        fc.tuple(fc.constantFrom(...keys), hostileValue, fc.boolean()).map(([key, item, hostileLast]) => {
          const original: [string, unknown] = [key, value[key]];
          const twin: [string, unknown] = [key, item];
          return {
            kind: `duplicate key ${key} (${hostileLast ? 'hostile' : 'valid'} one last)`,
            value: new Entries([...entries, ...(hostileLast ? [original, twin] : [twin, original])]),
          };
        }),
      );
    }
    const { minProperties, maxProperties } = schema;
    if (maxProperties !== undefined || minProperties !== undefined) {
      const sample = entries[0]?.[1] ?? 0;
      const counts = defined([
        minProperties === undefined ? undefined : minProperties - 1,
        maxProperties,
        maxProperties === undefined ? undefined : maxProperties + 1,
      ]).filter((n) => n >= 0);
      options.push(
        fc
          .constantFrom(...counts)
          .map((n) => ({ kind: `${n} properties`, value: Object.fromEntries(Array.from({ length: n }, (_, i) => [`m${i}`, sample])) })),
      );
    }
    return options;
  }
}

function mutant(original: unknown, path: Array<string | number>, kind: string, body: unknown): Mutant {
  const at = `/${path.join('/')}`;
  return {
    original,
    at,
    kind,
    body,
    [fc.toStringMethod]: () => `${kind} at ${at}: ${JSON.stringify(encodeJson(body).toString('utf8').slice(0, 600))}`,
  } as Mutant;
}

/** A copy of `root` with the value at `path` replaced. */
function replaceAt(root: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  if (Array.isArray(root)) return root.map((item, i) => (i === head ? replaceAt(item, rest, replacement) : item));
  const object = root as Record<string, unknown>;
  return Object.fromEntries(Object.entries(object).map(([key, item]) => [key, key === head ? replaceAt(item, rest, replacement) : item]));
}
