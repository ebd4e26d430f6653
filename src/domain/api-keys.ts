import { createHash, randomBytes } from 'node:crypto';
import { apiKeyPrefix } from '../contract/constants';

const KEY_FORMAT = new RegExp(`^${apiKeyPrefix}[A-Za-z0-9_-]{43}$`);

/** A new key: the prefix and 32 random bytes as 43 base64url characters. */
export function generateApiKey(): string {
  return apiKeyPrefix + randomBytes(32).toString('base64url');
}

export function isWellFormedKey(key: string): boolean {
  return KEY_FORMAT.test(key);
}

// A key, or what may be its secret part: the API's own ids and paths never hold 40 base64url characters in a row.
const KEY_LIKE = new RegExp(`${apiKeyPrefix}[A-Za-z0-9_-]*|[A-Za-z0-9_-]{40,}`, 'g');

/** The text with anything that may be a key replaced, for logging what a client sent (a key pasted into a URL path). */
export function redactKeys(text: string): string {
  return text.replace(KEY_LIKE, '[redacted]');
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What may be shown of a key after issue: enough to recognise it, never enough to use it. */
export function displayPrefix(key: string): string {
  return key.slice(0, apiKeyPrefix.length + 6);
}
