import type { OpenApiDocument } from '../../src/contract/document-source';

/** A JSON Schema node of the contract. */
export type Schema = OpenApiDocument;

/** Where a value sits in a body: property names, and '*' for any array item or map entry. */
export type Path = string[];

const TIGHTER_MIN = ['minLength', 'minimum', 'minItems', 'minProperties'];
const TIGHTER_MAX = ['maxLength', 'maximum', 'maxItems', 'maxProperties'];
const ANNOTATIONS = ['description', 'default', 'example', 'title'];

/**
 * Reads the contract's schemas as flat nodes a generator can act on: `$ref`
 * followed, `allOf` merged into one node, and for a given value the `oneOf` /
 * `anyOf` branch and `if`/`then` it falls under.
 */
export class SchemaModel {
  constructor(private readonly doc: OpenApiDocument) {}

  named(name: string): Schema {
    return { $ref: `#/components/schemas/${name}` };
  }

  /** The node with `$ref` and `allOf` resolved into it. */
  effective(schema: Schema): Schema {
    let node = schema;
    if (typeof node.$ref === 'string') {
      const { $ref, ...siblings } = node;
      node = merge(this.effective(this.target($ref as string)), siblings);
    }
    if (Array.isArray(node.allOf)) {
      const { allOf, ...rest } = node;
      node = (allOf as Schema[]).reduce((merged, branch) => merge(merged, this.effective(branch)), this.effective(rest));
    }
    return node;
  }

  /** The node as it applies to `value`: its `if`/`then` settled and the `oneOf`/`anyOf` branch chosen. */
  applied(schema: Schema, value: unknown): Schema {
    let node = this.effective(schema);
    if (node.if) {
      const { if: condition, then, else: otherwise, ...rest } = node;
      node = merge(rest, this.effective((holds(condition, value) ? then : otherwise) ?? {}));
    }
    const branches = (node.oneOf ?? node.anyOf) as Schema[] | undefined;
    if (!branches) return node;
    const { oneOf: _oneOf, anyOf: _anyOf, ...rest } = node;
    const candidates = branches.map((branch) => merge(rest, this.effective(branch)));
    return this.applied(candidates.find((branch) => fits(branch, value)) ?? rest, value);
  }

  /** The schema of the member `key` of an object described by `node` (an applied node). */
  member(node: Schema, key: string): Schema {
    const declared = node.properties?.[key];
    if (declared) return declared;
    return typeof node.additionalProperties === 'object' ? node.additionalProperties : {};
  }

  private target(ref: string): Schema {
    if (!ref.startsWith('#/')) throw new Error(`only local $refs are followed: ${ref}`);
    return ref
      .slice(2)
      .split('/')
      .reduce((node: Schema, key) => node[key], this.doc);
  }
}

/** Both schemas at once, as far as generation needs: properties and required united, enums and bounds intersected. */
export function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (ANNOTATIONS.includes(key)) continue;
    const mine = out[key];
    if (mine === undefined) out[key] = value;
    else if (key === 'properties') out.properties = mergeProperties(mine, value);
    else if (key === 'required') out.required = [...new Set([...mine, ...value])];
    else if (key === 'enum') out.enum = (mine as unknown[]).filter((v) => (value as unknown[]).includes(v));
    else if (TIGHTER_MIN.includes(key)) out[key] = Math.max(mine, value);
    else if (TIGHTER_MAX.includes(key)) out[key] = Math.min(mine, value);
    else if (JSON.stringify(mine) !== JSON.stringify(value))
      throw new Error(`cannot merge "${key}": ${JSON.stringify(mine)} and ${JSON.stringify(value)}`);
  }
  return out;
}

function mergeProperties(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a };
  for (const [key, schema] of Object.entries(b)) out[key] = out[key] ? { allOf: [out[key], schema] } : schema;
  return out;
}

/** Whether an `if` condition holds; the contract's conditions use only required, properties.enum and const. */
export function holds(condition: Schema, value: unknown): boolean {
  const known = new Set(['required', 'properties', 'description']);
  const unknown = Object.keys(condition).filter((k) => !known.has(k));
  if (unknown.length) throw new Error(`if-conditions with ${unknown.join(', ')} are not supported`);
  if (!isPlainObject(value)) return true;
  if (!(condition.required ?? []).every((k: string) => k in value)) return false;
  return Object.entries<Schema>(condition.properties ?? {}).every(([k, rule]) => {
    if (!(k in value)) return true;
    if (rule.enum) return (rule.enum as unknown[]).includes(value[k]);
    if ('const' in rule) return rule.const === value[k];
    return true;
  });
}

/** Whether a value has the JSON type a branch asks for (and the properties it requires). */
function fits(branch: Schema, value: unknown): boolean {
  const types = [branch.type ?? []].flat() as string[];
  if (types.length && !types.includes(jsonType(value)) && !(types.includes('number') && jsonType(value) === 'integer')) return false;
  return !Array.isArray(branch.required) || (isPlainObject(value) && branch.required.every((k: string) => k in value));
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The declared type of a node, read from `type` or implied by its keywords. */
export function typeOf(node: Schema): string | undefined {
  if (typeof node.type === 'string') return node.type;
  if (node.properties || node.additionalProperties !== undefined || node.propertyNames) return 'object';
  if (node.items) return 'array';
  return undefined;
}
