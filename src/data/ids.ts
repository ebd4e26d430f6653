import { randomBytes } from 'node:crypto';

export type IdPrefix = 'org' | 'mem' | 'app' | 'con' | 'key' | 'wkr' | 'evt' | 'req';

/**
 * A prefixed id that sorts by creation time: 9 base-36 digits of milliseconds
 * then 12 random base64url characters. Time-ordered keys keep B-tree inserts
 * at the right edge of the index.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${Date.now().toString(36).padStart(9, '0')}${randomBytes(9).toString('base64url')}`;
}

export function nowIso(): string {
  return new Date().toISOString();
}
