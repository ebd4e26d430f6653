import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { isDateTime } from './date-time';
import { sourceDocument, type OpenApiDocument } from './document-source';
import type { Schema, SchemaName } from './types';

export interface SchemaIssue {
  /** JSON pointer of the offending value, relative to the validated item. */
  path: string;
  message: string;
  keyword: string;
}

export type ItemValidator = (value: unknown) => SchemaIssue | undefined;

/** A validator whose valid value comes back as its component's generated type. */
export type TypedValidator<T> = (value: unknown) => { issue: SchemaIssue } | { value: T };

/**
 * Validators compiled from the contract's components.schemas, for checks the
 * middleware cannot make (per item), with the same formats in full mode.
 */
export class ContractValidators {
  private readonly ajv: Ajv2020;

  constructor(doc: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: false, verbose: true });
    addFormats(this.ajv, { mode: 'full' });
    // The same strings as theirs, decided without allocating (every event's timestamp passes here).
    this.ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
    this.ajv.addKeyword({
      keyword: 'x-max-serialized-bytes',
      type: 'object',
      schemaType: 'number',
      errors: true,
      validate: function maxSerializedBytes(max: number, data: object) {
        const json = JSON.stringify(data);
        lastMeasured = { value: data, json };
        // A UTF-16 code unit is at most 3 UTF-8 bytes: most metadata is decided without counting its bytes.
        const ok = json.length * 3 <= max || Buffer.byteLength(json, 'utf8') <= max;
        if (!ok) {
          (maxSerializedBytes as unknown as { errors: Partial<ErrorObject>[] }).errors = [
            { keyword: 'x-max-serialized-bytes', message: `must be at most ${max} bytes when serialized as JSON`, params: { limit: max } },
          ];
        }
        return ok;
      },
    });
    this.ajv.addSchema({ $id: 'contract', components: { schemas: doc.components.schemas } });
  }

  /** A validator for one component schema that reports the decisive issue, or undefined when valid. */
  item(schemaName: string): ItemValidator {
    const validate = this.ajv.getSchema(`contract#/components/schemas/${schemaName}`) as ValidateFunction | undefined;
    if (!validate) throw new Error(`openapi/v1.yaml has no schema ${schemaName}`);
    return (value) => (validate(value) ? undefined : describe(validate.errors ?? []));
  }

  /** Like item, and a valid value comes back typed. */
  typed<N extends SchemaName>(schemaName: N): TypedValidator<Schema<N>> {
    const issueOf = this.item(schemaName);
    // The one place a component's name meets its generated type: Ajv has just checked the value against that very schema.
    return (value) => {
      const issue = issueOf(value);
      return issue ? { issue } : { value: value as Schema<N> };
    };
  }

  /**
   * A copy of the object with the `default` of each absent top-level property of the
   * component schema filled in. Ajv's useDefaults is not used: it would also fill
   * defaults into responses that the tests check against the contract.
   */
  withDefaults<T extends object>(schemaName: string, value: T): T {
    const schema = this.ajv.getSchema(`contract#/components/schemas/${schemaName}`)?.schema as
      { properties?: Record<string, { default?: unknown }> } | undefined;
    if (!schema) throw new Error(`openapi/v1.yaml has no schema ${schemaName}`);
    const filled = { ...value } as Record<string, unknown>;
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      if (filled[name] === undefined && property.default !== undefined) filled[name] = structuredClone(property.default);
    }
    return filled as T;
  }
}

// The value last checked against x-max-serialized-bytes, and the JSON text it was measured as: what
// storing it writes when asked for right after validation, as judging an event does. One slot, not a
// WeakMap of every value measured: setting a WeakMap cost more than the second serialization (measured).
let lastMeasured: { value: object; json: string } | undefined;

/**
 * `value` as JSON text, null when absent: the text made to measure it when it
 * is the value a validator of this thread checked last, else made now.
 */
export function serializedJson(value: object | undefined): string | null {
  if (value === undefined) return null;
  return lastMeasured?.value === value ? lastMeasured.json : JSON.stringify(value);
}

let asWritten: ContractValidators | undefined;

/** A validator over the contract as written, compiled on first use: for rules ingestctl shares with the API. */
export function contractValidator(schemaName: string): ItemValidator {
  asWritten ??= new ContractValidators(sourceDocument());
  return asWritten.item(schemaName);
}

/** With allErrors off, the last error is the one that failed the value (anyOf/oneOf list their branches first). */
function describe(errors: ErrorObject[]): SchemaIssue {
  const error = errors[errors.length - 1] as ErrorObject;
  return { path: error.instancePath, keyword: error.keyword, message: `${messageOf(error)}${conditionOf(error)}` };
}

/** A rule of an if/then applies only under the if's condition, which the then schema's description states. */
function conditionOf(error: ErrorObject): string {
  if (!error.schemaPath.endsWith(`/then/${error.keyword}`)) return '';
  const description = (error.parentSchema as { description?: string } | undefined)?.description;
  return description ? ` ${description}` : '';
}

const DATE_TIME_MESSAGE = 'must be an ISO 8601 date-time with a timezone offset (Z or ±hh:mm) and a real date';

function messageOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `must not have the property "${String(params.additionalProperty)}"`;
    case 'enum':
      return `must be one of ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'required':
      return `must have the property "${String(params.missingProperty)}"`;
    case 'format':
      return params.format === 'date-time' ? DATE_TIME_MESSAGE : `must be a valid ${String(params.format)}`;
    case 'pattern':
      // The Timestamp's pattern only narrows its format: one message for both.
      return (error.parentSchema as { format?: string } | undefined)?.format === 'date-time'
        ? DATE_TIME_MESSAGE
        : (error.message ?? 'is not valid');
    case 'propertyNames':
      return `has an invalid property name "${String(params.propertyName)}"`;
    case 'oneOf':
    case 'anyOf': {
      const description = (error.parentSchema as { description?: string } | undefined)?.description;
      return description ? `does not match any allowed form: ${description}` : 'does not match any allowed form';
    }
    default:
      return error.message ?? 'is not valid';
  }
}
