import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'mem' | 'app' | 'con' | 'key' | 'wkr' | 'evt' | 'req' | 'ses' | 'aud';

const RANDOM_BYTES = 9;
const RANDOM_CHARS = 12;
const TIME_CHARS = 9;
/** Randomness drawn for 512 ids at a time, each byte used once. */
const POOL_BYTES = 512 * RANDOM_BYTES;

let pool = Buffer.alloc(0);
let poolUsed = 0;

/**
 * `bytes` random bytes (a multiple of 3) as base64url. From a pool: on this
 * machine a draw from the system cost 8-12 µs however few its bytes
 * (measured), and a batch made two, its request's id and its events'.
 */
function randomBase64url(bytes: number): string {
  if (bytes > POOL_BYTES) return randomBytes(bytes).toString('base64url');
  if (poolUsed + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolUsed = 0;
  }
  poolUsed += bytes;
  return pool.toString('base64url', poolUsed - bytes, poolUsed);
}

/**
 * Prefixed ids that sort by creation time: 9 base-36 digits of milliseconds
 * then 12 random base64url characters. Time-ordered keys keep B-tree inserts
 * at the right edge of the index. The randomness for a whole batch is taken at
 * once: one call per id was a measurable share of a batch's cost.
 * Returns `count` new ids.
 */
export function newIds(prefix: IdPrefix, count: number): string[] {
  const head = `${prefix}_${timePart()}`;
  // 9 bytes are exactly 12 base64url characters, so the whole draw's encoding is each id's, end to end: one encoding for the batch.
  const random = randomBase64url(RANDOM_BYTES * count);
  return Array.from({ length: count }, (_, i) => head + random.slice(i * RANDOM_CHARS, (i + 1) * RANDOM_CHARS));
}

/**
 * The ids one draw of newIds made with `id`, as a range in code-unit
 * order (PostgreSQL's "C" collation): they share its prefix and
 * milliseconds, and base64url's characters all sort before "~". With `ms`,
 * when they were drawn.
 */
export function idsDrawnWith(id: string): { from: string; to: string; ms: number } {
  const head = id.slice(0, id.indexOf('_') + 1 + TIME_CHARS);
  return { from: head, to: `${head}~`, ms: parseInt(head.slice(-TIME_CHARS), 36) };
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${timePart()}${randomBase64url(RANDOM_BYTES)}`;
}

function timePart(): string {
  return Date.now().toString(36).padStart(TIME_CHARS, '0');
}

export function nowIso(): string {
  return new Date().toISOString();
}
