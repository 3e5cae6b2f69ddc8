/** Row formats of the export skill: RFC 4180 CSV and newline-delimited JSON. */

export type Row = Record<string, unknown>;

export const FORMATS = {
  csv: { mediaType: 'text/csv', extension: 'csv' },
  ndjson: { mediaType: 'application/x-ndjson', extension: 'ndjson' },
} as const;
export type Format = keyof typeof FORMATS;

const csvField = (value: unknown): string => {
  const text =
    value === null || value === undefined
      ? ''
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
};

/** Serializes rows; for CSV the header line is written before the first chunk only. */
export function serialize(
  rows: readonly Row[],
  format: Format,
  columns: readonly string[],
  withHeader: boolean,
): string {
  if (format === 'ndjson') return rows.map((r) => `${JSON.stringify(r)}\n`).join('');
  const lines = rows.map((r) => columns.map((c) => csvField(r[c])).join(','));
  if (withHeader) lines.unshift(columns.map(csvField).join(','));
  return lines.map((l) => `${l}\r\n`).join('');
}

/** A deterministic synthetic row: the same index always gives the same row (re-runs are idempotent). */
export function generatedRow(i: number): Row {
  return {
    id: i + 1,
    name: `Customer ${i + 1}`,
    email: `customer${i + 1}@example.com`,
    amount: ((i * 7919) % 100_000) / 100,
    created_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  };
}
