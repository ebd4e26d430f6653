import type { OpenAPIV3 } from 'express-openapi-validator/dist/framework/types';
import { stringify } from 'yaml';
import type { Config } from '../config';
import { categorySet } from './categories';
import { sourceDocument, type OpenApiDocument } from './document-source';

export type ContractSettings = Pick<Config, 'eventCategorySet' | 'ingestBatchLimit'>;

/** The contract as this instance enforces it: the active EventCategory set and batch limit. */
export function configuredDocument(settings: ContractSettings): OpenApiDocument {
  const doc = structuredClone(sourceDocument());
  const schemas = doc.components.schemas;
  schemas.EventCategory.enum = categorySet(settings.eventCategorySet);
  schemas.EventCategory.description += `\nActive set: ${settings.eventCategorySet}.`;
  schemas.IngestEventBatch.properties.events.maxItems = settings.ingestBatchLimit;
  doc.info['x-batch-limit'] = settings.ingestBatchLimit;
  return doc;
}

export function serializeDocument(doc: OpenApiDocument): string {
  return stringify(doc, { lineWidth: 0 });
}

/**
 * The copy given to express-openapi-validator, with the paths `keep` keeps.
 * Operations marked `x-item-validation` have their items judged one by one by
 * the handler (one bad event must not sink its batch), so the middleware checks
 * only the envelope: the schema at that JSON pointer inside the request body
 * schema is replaced by `{}`.
 */
export function middlewareDocument(doc: OpenApiDocument, keep: (path: string) => boolean): OpenAPIV3.DocumentV3_1 {
  const copy = structuredClone(doc);
  copy.paths = Object.fromEntries(Object.entries<OpenApiDocument>(copy.paths).filter(([path]) => keep(path)));
  for (const pathItem of Object.values<OpenApiDocument>(copy.paths)) {
    for (const operation of Object.values<OpenApiDocument>(pathItem)) {
      const pointer: unknown = operation?.['x-item-validation'];
      if (typeof pointer !== 'string') continue;
      const media = operation.requestBody.content['application/json'];
      media.schema = withEmptySchemaAt(resolveRef(copy, media.schema), pointer);
    }
  }
  // openapi/v1.yaml is an OpenAPI 3.1 document by construction (make lint checks it with Redocly).
  return copy as OpenAPIV3.DocumentV3_1;
}

function resolveRef(doc: OpenApiDocument, schema: OpenApiDocument): OpenApiDocument {
  if (typeof schema.$ref !== 'string') return schema;
  const target = (schema.$ref as string)
    .slice(2)
    .split('/')
    .reduce((node: OpenApiDocument, key) => node[key], doc);
  return structuredClone(target);
}

function withEmptySchemaAt(schema: OpenApiDocument, pointer: string): OpenApiDocument {
  if (pointer === '') return {};
  const keys = pointer.slice(1).split('/');
  const last = keys.pop() as string;
  const parent = keys.reduce((node: OpenApiDocument, key) => node[key], schema);
  parent[last] = {};
  return schema;
}
