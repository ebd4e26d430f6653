import type { components } from '../../../../generated/openapi';

export type TimelineRow = components['schemas']['TimelineRow'];
export type WorkerRef = components['schemas']['WorkerRef'];
type Category = components['schemas']['EventCategory'];

/** The contract's categories, named for people (a category added to the contract breaks this type check). */
export const categoryLabels = {
  PRESENCE: 'Presence',
  COMMUNICATION: 'Communication',
  CODE_CHANGE: 'Code change',
  CODE_REVIEW: 'Code review',
  TASK_UPDATE: 'Task update',
  MEETING: 'Meeting',
  DOCUMENT: 'Document',
  AI_TASK: 'AI task',
} satisfies Record<Category, string>;

export const isCategory = (value: string | null): value is Category => value !== null && value in categoryLabels;

/**
 * One line of the virtual list: a worker's heading, one of their rows, or the way to the rest of
 * their day. Each kind has a fixed height (`itemHeights`, matched by the stylesheet), so the list
 * never jumps while scrolling up.
 */
export type ListItem =
  | { kind: 'worker'; key: string; worker: WorkerRef; count?: number; latestAt?: string }
  | { kind: 'row'; key: string; row: TimelineRow }
  | { kind: 'more'; key: string; worker: WorkerRef; count: number };

export const itemHeights: Record<ListItem['kind'], number> = { worker: 56, row: 44, more: 44 };

/** Rows newest first under a heading each time the worker changes (a filtered day, or one worker's rows). */
export function underWorkerHeadings(rows: TimelineRow[], headings: boolean): ListItem[] {
  const items: ListItem[] = [];
  let previous: string | undefined;
  for (const row of rows) {
    if (headings && row.worker.id !== previous) items.push({ kind: 'worker', key: `w-${row.id}`, worker: row.worker });
    previous = row.worker.id;
    items.push({ kind: 'row', key: row.id, row });
  }
  return items;
}

/** What a row is, in a word: its event or snapshot type. */
export const rowType = (row: TimelineRow) => row.eventType ?? row.snapshotType ?? row.kind;

/** The first few metadata entries (or metrics), for the row's one-line summary. */
export function rowSummary(row: TimelineRow): string {
  const entries = row.metrics
    ? row.metrics.map((m) => [m.label ?? m.id, m.value] as const)
    : Object.entries(row.metadata ?? {}).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : v] as const);
  return entries
    .slice(0, 3)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(' · ');
}
