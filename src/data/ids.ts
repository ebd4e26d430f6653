import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'mem' | 'app' | 'con' | 'key' | 'wkr' | 'evt' | 'req' | 'ses' | 'aud';

const RANDOM_BYTES = 9;

/**
 * Prefixed ids that sort by creation time: 9 base-36 digits of milliseconds
 * then 12 random base64url characters. Time-ordered keys keep B-tree inserts
 * at the right edge of the index. The randomness for a whole batch is drawn at
 * once: one call per id was a measurable share of a batch's cost.
 */
export function newIds(prefix: IdPrefix, count: number): string[] {
  const time = Date.now().toString(36).padStart(9, '0');
  const random = randomBytes(RANDOM_BYTES * count);
  return Array.from({ length: count }, (_, i) => `${prefix}_${time}${random.toString('base64url', i * RANDOM_BYTES, (i + 1) * RANDOM_BYTES)}`);
}

export function newId(prefix: IdPrefix): string {
  return newIds(prefix, 1)[0] as string;
}

export function nowIso(): string {
  return new Date().toISOString();
}
