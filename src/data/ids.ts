import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'mem' | 'app' | 'con' | 'key' | 'wkr' | 'evt' | 'req' | 'ses' | 'aud';

const RANDOM_BYTES = 9;
const RANDOM_CHARS = 12;
const TIME_CHARS = 9;

/**
 * Prefixed ids that sort by creation time: 9 base-36 digits of milliseconds
 * then 12 random base64url characters. Time-ordered keys keep B-tree inserts
 * at the right edge of the index. The randomness for a whole batch is drawn at
 * once: one call per id was a measurable share of a batch's cost.
 * Returns `count` new ids.
 */
export function newIds(prefix: IdPrefix, count: number): string[] {
  const head = `${prefix}_${timePart()}`;
  // 9 bytes are exactly 12 base64url characters, so the whole draw's encoding is each id's, end to end: one encoding for the batch.
  const random = randomBytes(RANDOM_BYTES * count).toString('base64url');
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
  return `${prefix}_${timePart()}${randomBytes(RANDOM_BYTES).toString('base64url')}`;
}

function timePart(): string {
  return Date.now().toString(36).padStart(TIME_CHARS, '0');
}

export function nowIso(): string {
  return new Date().toISOString();
}
