import type { MetricEntry } from '../data/snapshots';
import type { Schema } from '../contract/types';

// JavaScript objects list integer-like keys ("7", "2024") first, whatever order the
// JSON had; only then is the sent order recovered from the raw body.
const INTEGER_LIKE = /^(0|[1-9]\d{0,9})$/;

/** The snapshot's metrics in the order they appear in the request body. */
export function metricsInSentOrder(metrics: Record<string, unknown>, rawBody: Buffer | undefined): MetricEntry[] {
  const keys = Object.keys(metrics);
  if (!rawBody || !keys.some((k) => INTEGER_LIKE.test(k))) return Object.entries(metrics);
  const sent = keysOfMember(rawBody.toString('utf8'), 'metrics');
  const ordered = sent.filter((k, i) => k in metrics && sent.indexOf(k) === i);
  return ordered.length === keys.length ? ordered.map((k) => [k, metrics[k]]) : Object.entries(metrics);
}

/** Keys of the object held by the top-level member `member`, in textual order. `text` is valid JSON. */
function keysOfMember(text: string, member: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let insideMember = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      const end = endOfString(text, i);
      let next = end + 1;
      while (/\s/.test(text[next] ?? '')) next++;
      if (text[next] === ':') {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (depth === 1) insideMember = key === member;
        else if (depth === 2 && insideMember) keys.push(key);
      }
      i = end;
    } else if (ch === '{' || ch === '[') {
      depth++;
    } else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 1 && insideMember) return keys;
    }
  }
  return keys;
}

function endOfString(text: string, start: number): number {
  let i = start + 1;
  while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}

/** A stored metric as the console shows it: `{ id, value, unit?, label? }`. */
export function stripMetric([id, metric]: MetricEntry): Schema<'StripMetric'> {
  if (typeof metric === 'number' || typeof metric === 'string') return { id, value: metric };
  const object = metric as Schema<'MetricObject'>;
  const shown: Schema<'StripMetric'> = { id, value: object.value };
  if (object.unit !== undefined) shown.unit = object.unit;
  if (object.label !== undefined) shown.label = object.label;
  return shown;
}
