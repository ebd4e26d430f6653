import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { contractPath } from '../paths';

// The document is a plain JSON-like tree; callers navigate it by the names the contract defines.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OpenApiDocument = Record<string, any>;

let cached: OpenApiDocument | undefined;

/** openapi/v1.yaml exactly as written, parsed once. Treat as read-only: derive copies with structuredClone. */
export function sourceDocument(): OpenApiDocument {
  cached ??= parse(readFileSync(contractPath, 'utf8')) as OpenApiDocument;
  return cached;
}
