import { actorKeys } from '../contract/constants';
import type { TypedValidator } from '../contract/validators';
import type { ErrorCode } from '../errors';
import { utcInstant, type UtcInstant } from './utc-timestamp';

export type Rejection = { code: ErrorCode; message: string };

/**
 * Judges one item against its contract schema. An actor that is absent or has
 * none of the identifying fields (actorKeys) is `missing_actor`; any other schema
 * failure is `invalid_body`. `pointer` locates the item in the request body.
 */
export function judgeSchema<T>(validate: TypedValidator<T>, item: unknown, pointer: string): Rejection | { value: T } {
  const verdict = validate(item);
  if ('value' in verdict) return verdict;
  const { issue } = verdict;
  const actorMissing =
    (issue.path === '' && issue.keyword === 'required' && issue.message.includes('"actor"')) ||
    (issue.path === '/actor' && (issue.keyword === 'anyOf' || issue.keyword === 'minProperties'));
  if (actorMissing && !hasIdentifyingField(item)) {
    return { code: 'missing_actor', message: `${pointer}/actor must have at least one of ${actorKeys.join(', ')}` };
  }
  return { code: 'invalid_body', message: `${pointer}${issue.path} ${issue.message}` };
}

function hasIdentifyingField(item: unknown): boolean {
  const actor = (item as { actor?: unknown })?.actor;
  return typeof actor === 'object' && actor !== null && actorKeys.some((k) => k in actor);
}

/** Why normalizeTimestamp gave undefined, after the JSON pointer of the timestamp. */
export const UNREPRESENTABLE_TIMESTAMP = 'is not a real point in time within the years 0000 to 9999 (UTC)';

/**
 * An ISO date-time with offset as UTC `Z` (the time it was received when absent); undefined for dates the
 * format admits but time cannot hold (leap seconds), and for instants outside the years 0000 to 9999.
 */
export function normalizeTimestamp(value: string | undefined, receivedAt: Date): string | undefined {
  return normalizedInstant(value, receivedAt)?.text;
}

/** normalizeTimestamp's text with the instant it names: an event's day in the rollups is read from it. */
export function normalizedInstant(value: string | undefined, receivedAt: Date): UtcInstant | undefined {
  return value === undefined ? { text: receivedAt.toISOString(), ms: receivedAt.getTime() } : utcInstant(value);
}
