import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'mem' | 'app' | 'con' | 'key' | 'wkr' | 'evt' | 'req' | 'ses' | 'aud';

const RANDOM_BYTES = 9;

/**
 * Prefixed ids that sort by creation time: 9 base-36 digits of milliseconds
 * then 12 random base64url characters. Time-ordered keys keep B-tree inserts
 * at the right edge of the index. The randomness for a whole batch is drawn at
 * once: one call per id was a measurable share of a batch's cost.
 * Returns the items, each with a new id of its own.
 */
export function withNewIds<T extends object>(prefix: IdPrefix, items: T[]): Array<T & { id: string }> {
  const time = timePart();
  const random = randomBytes(RANDOM_BYTES * items.length);
  return items.map((item, i) => ({ ...item, id: idOf(prefix, time, random, i) }));
}

export function newId(prefix: IdPrefix): string {
  return idOf(prefix, timePart(), randomBytes(RANDOM_BYTES), 0);
}

function timePart(): string {
  return Date.now().toString(36).padStart(9, '0');
}

function idOf(prefix: IdPrefix, time: string, random: Buffer, i: number): string {
  return `${prefix}_${time}${random.toString('base64url', i * RANDOM_BYTES, (i + 1) * RANDOM_BYTES)}`;
}

export function nowIso(): string {
  return new Date().toISOString();
}
