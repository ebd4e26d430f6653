import type { ExpressionBuilder } from 'kysely';
import type { Database, Executor } from './schema';

export interface StoredResponse {
  status: number;
  body: string;
  requestId: string;
}

export type IdempotencyRecord =
  | { state: 'in_progress'; fingerprint: string; expiresAt: string }
  | ({ state: 'done'; fingerprint: string; expiresAt: string } & StoredResponse);

export interface RecordKey {
  apiKeyId: string;
  idempotencyKey: string;
}

function isRecord(key: RecordKey) {
  return (eb: ExpressionBuilder<Database, 'idempotency_records'>) =>
    eb.and([eb('api_key_id', '=', key.apiKeyId), eb('idempotency_key', '=', key.idempotencyKey)]);
}

export async function findRecord(db: Executor, key: RecordKey): Promise<IdempotencyRecord | undefined> {
  const row = await db.selectFrom('idempotency_records').selectAll().where(isRecord(key)).executeTakeFirst();
  if (!row) return undefined;
  if (row.state === 'in_progress') return { state: 'in_progress', fingerprint: row.fingerprint, expiresAt: row.expires_at };
  return {
    state: 'done',
    fingerprint: row.fingerprint,
    expiresAt: row.expires_at,
    status: row.status as number,
    body: row.body as string,
    requestId: row.response_request_id as string,
  };
}

/** Claims the key for a new request; false when a record already exists. */
export async function insertClaim(db: Executor, key: RecordKey, fingerprint: string, now: string, leaseUntil: string): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotency_records')
    .values({
      api_key_id: key.apiKeyId,
      idempotency_key: key.idempotencyKey,
      fingerprint,
      state: 'in_progress',
      status: null,
      body: null,
      response_request_id: null,
      created_at: now,
      expires_at: leaseUntil,
    })
    .onConflict((oc) => oc.columns(['api_key_id', 'idempotency_key']).doNothing())
    .returning('api_key_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Takes over a record whose window or lease has passed; false when another request got it first. */
export async function takeOverExpired(db: Executor, key: RecordKey, fingerprint: string, now: string, leaseUntil: string): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_records')
    .set({ fingerprint, state: 'in_progress', status: null, body: null, response_request_id: null, created_at: now, expires_at: leaseUntil })
    .where(isRecord(key))
    .where('expires_at', '<=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function extendLease(db: Executor, key: RecordKey, fingerprint: string, leaseUntil: string): Promise<void> {
  await db
    .updateTable('idempotency_records')
    .set({ expires_at: leaseUntil })
    .where(isRecord(key))
    .where('fingerprint', '=', fingerprint)
    .where('state', '=', 'in_progress')
    .execute();
}

/** Stores the response of the claimed request; false when the claim was lost (its lease expired and was taken over). */
export async function completeClaim(db: Executor, key: RecordKey, fingerprint: string, response: StoredResponse, expiresAt: string): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_records')
    .set({ state: 'done', status: response.status, body: response.body, response_request_id: response.requestId, expires_at: expiresAt })
    .where(isRecord(key))
    .where('fingerprint', '=', fingerprint)
    .where('state', '=', 'in_progress')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function releaseClaim(db: Executor, key: RecordKey, fingerprint: string): Promise<void> {
  await db.deleteFrom('idempotency_records').where(isRecord(key)).where('fingerprint', '=', fingerprint).where('state', '=', 'in_progress').execute();
}

/** Deletes records whose window has passed, walking the expires_at index. */
export async function purgeExpired(db: Executor, now: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Frees every claim still in progress: only for a database no other live process writes to. */
export async function releaseAllClaims(db: Executor): Promise<number> {
  const result = await db.deleteFrom('idempotency_records').where('state', '=', 'in_progress').executeTakeFirst();
  return Number(result.numDeletedRows);
}
