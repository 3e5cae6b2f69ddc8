import type { Json } from './client.js';
import { HANDLE_EXTENSION, shortState } from './states.js';

/** The task-handle metadata of a task or an event (empty when the agent does not use the extension). */
export const handleOf = (x: Json | undefined): Json => (x?.metadata?.[HANDLE_EXTENSION] as Json) ?? {};

/** The text of a message's text parts (a status message, an agent reply). */
export function messageText(message: Json | undefined): string {
  const parts = (message?.parts ?? []) as Json[];
  return parts
    .map((p) => (typeof p.text === 'string' ? p.text : p.data !== undefined ? JSON.stringify(p.data) : ''))
    .filter((t) => t !== '')
    .join(' ');
}

/** `42% 2520 of 6000 rows` (empty when no progress is known). */
export function progressText(progress: Json | undefined): string {
  if (!progress) return '';
  const percent = typeof progress.percent === 'number' ? `${Math.round(progress.percent)}%` : '';
  return [percent, typeof progress.message === 'string' ? progress.message : ''].filter(Boolean).join(' ');
}

/** The human view of a task, for `get`. */
export function describeTask(task: Json): string {
  const handle = handleOf(task);
  const rows: [string, string][] = [
    ['id', String(task.id)],
    ['state', shortState(String(task.status?.state ?? 'unknown'))],
  ];
  const progress = progressText(handle.progress);
  if (progress) rows.push(['progress', progress]);
  const message = messageText(task.status?.message);
  if (message) rows.push(['message', message]);
  if (task.status?.timestamp) rows.push(['updated', String(task.status.timestamp)]);
  if (handle.expiresAt) rows.push(['expires', String(handle.expiresAt)]);
  const artifacts = (task.artifacts ?? []) as Json[];
  if (artifacts.length > 0)
    rows.push(['artifacts', artifacts.map((a) => String(a.name ?? a.artifactId)).join(', ')]);
  return rows.map(([k, v]) => `${k.padEnd(9)} ${v}`).join('\n');
}

/** One line per task, for `list`. */
export function taskLine(task: Json): string {
  const state = shortState(String(task.status?.state ?? 'unknown')).padEnd(14);
  const when = String(task.status?.timestamp ?? '').padEnd(24);
  const progress = progressText(handleOf(task).progress);
  const message = messageText(task.status?.message);
  return `${task.id}  ${state} ${when} ${progress || message}`.trimEnd();
}

/** The live progress line: `[#######.............]  35% working  2100 of 6000 rows`, padded or cut to `width`. */
export function progressBar(percent: number | undefined, text: string, state: string, width: number): string {
  const w = Math.max(width, 40);
  const cells = 20;
  const filled =
    percent === undefined ? 0 : Math.max(0, Math.min(cells, Math.round((percent / 100) * cells)));
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(cells - filled)}]`;
  const pct = percent === undefined ? '   ?' : `${String(Math.round(percent)).padStart(3)}%`;
  const line = `${bar} ${pct} ${shortState(state)}${text ? `  ${text}` : ''}`;
  return line.length > w - 1 ? line.slice(0, w - 1) : line.padEnd(w - 1);
}

/** Metadata key of a file part that links a large artifact stored by the agent (its size). */
const LINKED_BYTES = 'taskhandle.bytes';

/** A piece of a result: bytes to write, or a file the agent links, to download and write. */
export type ResultPiece = Buffer | { download: string };

/**
 * The result of a task, in order: one file artifact is its bytes (its `raw` base64 parts joined,
 * or the file the agent links when it is large); otherwise each part in order: text as text, data
 * as JSON lines, files as bytes, other URLs as lines.
 */
export function resultPieces(artifacts: Json[]): ResultPiece[] {
  const pieces: ResultPiece[] = [];
  for (const artifact of artifacts) {
    for (const part of (artifact.parts ?? []) as Json[]) {
      if (typeof part.raw === 'string') pieces.push(Buffer.from(part.raw, 'base64'));
      else if (typeof part.file?.bytes === 'string') pieces.push(Buffer.from(part.file.bytes, 'base64'));
      else if (typeof part.text === 'string') pieces.push(Buffer.from(withNewline(part.text)));
      else if (part.data !== undefined) pieces.push(Buffer.from(`${JSON.stringify(part.data)}\n`));
      else if (typeof part.url === 'string' && part.metadata?.[LINKED_BYTES] !== undefined)
        pieces.push({ download: part.url });
      else if (typeof part.url === 'string') pieces.push(Buffer.from(`${part.url}\n`));
    }
  }
  return pieces;
}

const withNewline = (s: string): string => (s.endsWith('\n') ? s : `${s}\n`);
