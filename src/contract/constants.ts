import { sourceDocument } from './document-source';

/**
 * Values the contract states and the service enforces, read from
 * openapi/v1.yaml so that each exists in one place. A missing or malformed
 * value stops the service at start.
 */

const doc = sourceDocument();

function integer(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new Error(`openapi/v1.yaml: ${where} must be an integer`);
  return value;
}

function text(value: unknown, where: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`openapi/v1.yaml: ${where} must be a string`);
  return value;
}

function strings(value: unknown, where: string): string[] {
  if (!Array.isArray(value)) throw new Error(`openapi/v1.yaml: ${where} must be a list`);
  return value.map((item, i) => text(item, `${where}[${i}]`));
}

/** A request body's largest size, counted after decompression (`info.x-max-body-bytes`). */
export const maxBodyBytes = integer(doc.info['x-max-body-bytes'], 'info.x-max-body-bytes');

/** The largest request line and headers together (`info.x-max-header-bytes`). */
export const maxHeaderBytes = integer(doc.info['x-max-header-bytes'], 'info.x-max-header-bytes');

/** How deep arrays and objects may nest in a body, the body itself being level 1 (`info.x-max-nesting-depth`). */
export const maxNestingDepth = integer(doc.info['x-max-nesting-depth'], 'info.x-max-nesting-depth');

const cors = doc.info['x-cors'];
/** The CORS answer of the ingest endpoints (`info.x-cors`). */
export const corsPolicy = {
  methods: strings(cors?.methods, 'info.x-cors.methods'),
  allowedHeaders: strings(cors?.allowedHeaders, 'info.x-cors.allowedHeaders'),
  exposedHeaders: strings(cors?.exposedHeaders, 'info.x-cors.exposedHeaders'),
  maxAgeSeconds: integer(cors?.maxAgeSeconds, 'info.x-cors.maxAgeSeconds'),
};

const idempotencyKey = doc.components.parameters.IdempotencyKey;
/** The longest Idempotency-Key (the parameter's `maxLength`). */
export const idempotencyKeyMaxLength = integer(idempotencyKey.schema?.maxLength, 'IdempotencyKey schema maxLength');
/** How long a claimed Idempotency-Key holds without news from its request (`x-claim-lease-seconds`). */
export const claimLeaseSeconds = integer(idempotencyKey['x-claim-lease-seconds'], 'IdempotencyKey x-claim-lease-seconds');

/**
 * The media types a request body may be sent in: every one an operation's `requestBody` declares. The body
 * reader refuses any other before an Idempotency-Key is claimed, as the contract's validator would after.
 */
export const requestMediaTypes: ReadonlySet<string> = new Set(
  Object.values<Record<string, { requestBody?: { content?: object } }>>(doc.paths).flatMap((pathItem) =>
    Object.values(pathItem).flatMap((operation) => Object.keys(operation?.requestBody?.content ?? {})),
  ),
);
if (requestMediaTypes.size === 0) throw new Error('openapi/v1.yaml: no operation declares a request body media type');

/** What every API key starts with (`bearerAuth.x-key-prefix`). */
export const apiKeyPrefix = text(doc.components.securitySchemes.bearerAuth['x-key-prefix'], 'bearerAuth x-key-prefix');

/** The actor fields that identify a worker, in the order they are tried: the Actor schema's `anyOf` alternatives. */
export const actorKeys = strings(
  (doc.components.schemas.Actor.allOf?.[0]?.anyOf ?? []).map((alternative: { required?: string[] }) => alternative.required?.[0]),
  'Actor allOf[0].anyOf[].required',
);
