// The timeline as a download: CSV (RFC 4180) or NDJSON, one record per row.
import type { Schema } from '../contract/types';

export type ExportFormat = 'csv' | 'ndjson';

type Row = Schema<'TimelineRow'>;

const columns: readonly (readonly [string, (row: Row) => string | number | undefined])[] = [
  ['id', (r) => r.id],
  ['kind', (r) => r.kind],
  ['integrationId', (r) => r.integrationId],
  ['appId', (r) => r.app.id],
  ['appSlug', (r) => r.app.slug],
  ['appName', (r) => r.app.name],
  ['workerId', (r) => r.worker.id],
  ['workerName', (r) => r.worker.displayName],
  ['type', (r) => r.eventType ?? r.snapshotType],
  ['category', (r) => r.category],
  ['timestamp', (r) => r.timestamp],
  ['receivedAt', (r) => r.receivedAt],
  ['duration', (r) => r.duration],
  ['pillar', (r) => r.pillar],
  ['statisticId', (r) => r.statisticId],
  ['requestId', (r) => r.requestId],
  ['metadata', (r) => (r.metadata === undefined ? undefined : JSON.stringify(r.metadata))],
  ['metrics', (r) => (r.metrics === undefined ? undefined : JSON.stringify(r.metrics))],
];

// A spreadsheet runs a cell that starts with one of these as a formula (CSV injection).
const FORMULA_START = /^[=+\-@]/;

/** One CSV cell: formula starts defused with a leading quote, then quoted as RFC 4180 asks. */
export function csvCell(value: string | number | undefined): string {
  if (value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function csvLine(cells: (string | number | undefined)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** The first line of a CSV export. */
export const csvHeader = csvLine(columns.map(([name]) => name));

/** One row as a record of the export (CRLF-ended for CSV, LF for NDJSON). */
export function exportRecord(format: ExportFormat, row: Row): string {
  return format === 'csv' ? csvLine(columns.map(([, get]) => get(row))) : `${JSON.stringify(row)}\n`;
}

export const exportContentType: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

/** `timeline-<organization>-<UTC time>.<format>`: only characters safe in a header and a file name. */
export function exportFileName(orgId: string, format: ExportFormat, now: Date): string {
  return `timeline-${orgId}-${now.toISOString().replace(/[:.]/g, '-')}.${format}`;
}
