import assert from 'node:assert/strict';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Response } from 'supertest';
import { configuredDocument, type ContractSettings } from '../../src/contract/document';
import type { OpenApiDocument } from '../../src/contract/document-source';

const defaults: ContractSettings = { eventCategorySet: 'B', ingestBatchLimit: 500 };
const compiled = new Map<string, ValidateFunction>();
let ajv: Ajv2020 | undefined;
let doc: OpenApiDocument | undefined;

function resolve(node: OpenApiDocument): OpenApiDocument {
  if (typeof node?.$ref !== 'string') return node;
  return (node.$ref as string)
    .slice(2)
    .split('/')
    .reduce((n: OpenApiDocument, key) => n[key], doc as OpenApiDocument);
}

function operationFor(method: string, path: string): { template: string; operation: OpenApiDocument } | undefined {
  for (const [template, item] of Object.entries<OpenApiDocument>((doc as OpenApiDocument).paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(path) && item[method.toLowerCase()]) return { template, operation: item[method.toLowerCase()] };
  }
  return undefined;
}

/** A response from any HTTP client: enough to check it against the contract. */
export interface ContractResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/**
 * Asserts that a response is one the contract documents: a documented status,
 * its required headers, and a body valid against its schema. Errors outside
 * documented operations must still have the Error shape.
 */
export function assertContract(res: Response | ContractResponse, at?: { method: string; path: string }): void {
  doc ??= configuredDocument(defaults);
  const request = at ?? (res as unknown as { req: { method: string; path: string } }).req;
  const method = request.method;
  const path = request.path.split('?')[0] as string;
  assert.ok(res.headers['x-request-id'], 'every response carries X-Request-Id');
  if (path.startsWith('/api/v1/')) assert.match(String(res.headers['x-api-version']), /^\d{4}-\d{2}-\d{2}$/);

  const found = operationFor(method, path);
  const documented = found?.operation.responses?.[String(res.status)];
  if (!documented) {
    assert.ok(res.status >= 400, `${method} ${path} answered ${res.status}, which the contract does not document`);
    check(`error`, { $ref: '#/components/schemas/Error' }, res.body, `${method} ${path} ${res.status}`);
    return;
  }
  const response = resolve(documented);
  for (const [name, header] of Object.entries<OpenApiDocument>(response.headers ?? {})) {
    const spec = resolve(header);
    const value = res.headers[name.toLowerCase()];
    if (spec.required) assert.ok(value !== undefined, `${method} ${path} ${res.status} must carry ${name}`);
    if (value !== undefined && spec.schema?.type === 'integer') assert.match(String(value), /^\d+$/, `${name} must be an integer`);
  }
  const schema = response.content?.['application/json']?.schema;
  if (schema) check(`${found?.template} ${method} ${res.status}`, schema, res.body, `${method} ${path} ${res.status}`);
}

function check(cacheKey: string, schema: object, body: unknown, label: string): void {
  let validate = compiled.get(cacheKey);
  if (!validate) {
    validate = compile(schema);
    compiled.set(cacheKey, validate);
  }
  assert.ok(validate(body), `${label} body breaks the contract: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
}

/** Compiles a response schema that may $ref the contract's components (as `#/components/...`). */
function compile(schema: object): ValidateFunction {
  if (!ajv) {
    ajv = new Ajv2020({ strict: false });
    addFormats(ajv, { mode: 'full' });
    ajv.addSchema({ $id: 'contract', components: { schemas: (doc as OpenApiDocument).components.schemas } });
  }
  return ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"contract#/components/')) as object);
}
