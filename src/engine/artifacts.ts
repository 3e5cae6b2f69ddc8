import type { LoggedEvent } from './events.js';
import type { Artifact, BlobRef, Part } from './task.js';

/**
 * Artifacts in the log, and artifacts as callers see them. A skill's large artifact is stored out
 * of the log (its parts become blob parts, see {@link toBlobPart}); a view then shows the artifact as
 * one file part linking to the download route, so nothing that reads a task builds anything as large
 * as its artifacts. Small artifacts stay inline, as written.
 */

/** Where a view links a task's large artifact: its download URL. */
export type ArtifactLink = (taskId: string, artifactId: string) => string;

/** Metadata key of a linked file part: the file's size in bytes. */
export const ARTIFACT_BYTES = 'taskhandle.bytes';

/** A blob part, with where the log keeps it (filled in when the log is folded, not stored). */
export interface LocatedBlob extends BlobRef {
  seq: number;
  part: number;
}

/** The bytes a part adds to an artifact: decoded bytes for raw parts, UTF-8 bytes otherwise. */
export function partBytes(p: Part): number {
  if (p.blob) return p.blob.size;
  if (p.raw !== undefined) return Buffer.byteLength(p.raw, 'base64');
  if (p.text !== undefined) return Buffer.byteLength(p.text);
  if (p.data !== undefined) return Buffer.byteLength(JSON.stringify(p.data) ?? '');
  return Buffer.byteLength(p.url ?? '');
}

/** A part's content as the bytes of a file (raw decoded, text as UTF-8, data as its JSON). */
export function partContent(p: Part): Buffer {
  if (p.raw !== undefined) return Buffer.from(p.raw, 'base64');
  if (p.text !== undefined) return Buffer.from(p.text);
  if (p.data !== undefined) return Buffer.from(JSON.stringify(p.data) ?? '');
  return Buffer.from(p.url ?? '');
}

/** Moves a part's content out of line: the part that the log keeps, and the bytes stored beside it. */
export function toBlobPart(p: Part): { part: Part; data: Buffer } | undefined {
  const kind =
    p.raw !== undefined ? 'raw' : p.text !== undefined ? 'text' : p.data !== undefined ? 'data' : undefined;
  if (!kind) return undefined; // a URL is a reference already
  const data = partContent(p);
  const { raw: _r, text: _t, data: _d, ...rest } = p;
  return { part: { ...rest, blob: { kind, size: data.length } }, data };
}

/** A blob part with its content read back: the part as the skill wrote it. */
export function fromBlobPart(p: Part, data: Buffer): Part {
  const { blob, ...rest } = p;
  if (blob?.kind === 'text') return { ...rest, text: data.toString('utf8') };
  if (blob?.kind === 'data') return { ...rest, data: JSON.parse(data.toString('utf8')) as unknown };
  return { ...rest, raw: data.toString('base64') };
}

/**
 * The task's artifacts as its log adds them up (chunks appended in order, a non-append update
 * replacing the artifact), blob parts located in the log.
 */
export function foldArtifacts(log: readonly LoggedEvent[]): Map<string, Artifact> {
  const artifacts = new Map<string, Artifact>();
  for (const { event, seq } of log) {
    if (event.kind !== 'artifact') continue;
    const parts = event.artifact.parts.some((p) => p.blob)
      ? event.artifact.parts.map((p, part) => (p.blob ? { ...p, blob: { ...p.blob, seq, part } } : p))
      : event.artifact.parts;
    const previous = artifacts.get(event.artifact.artifactId);
    artifacts.set(
      event.artifact.artifactId,
      event.append && previous
        ? { ...previous, parts: [...previous.parts, ...parts] }
        : { ...event.artifact, parts },
    );
  }
  return artifacts;
}

/** What a file download of an artifact is called and holds. */
export interface ArtifactFileInfo {
  filename: string;
  mediaType: string;
  size: number;
}

export function fileInfo(artifact: Artifact): ArtifactFileInfo {
  const first = artifact.parts[0];
  const kind =
    first?.blob?.kind ?? (first?.text !== undefined ? 'text' : first?.data !== undefined ? 'data' : 'raw');
  const fallback = { raw: 'application/octet-stream', text: 'text/plain', data: 'application/json' }[kind];
  return {
    filename:
      artifact.parts.find((p) => p.filename)?.filename ?? artifact.name ?? `${artifact.artifactId}.bin`,
    mediaType: first?.mediaType ?? fallback,
    size: artifact.parts.reduce((sum, p) => sum + partBytes(p), 0),
  };
}

/** The artifact as callers see it: inline as written, or (holding blob parts) one linked file part. */
export function shownArtifact(artifact: Artifact, url: string): Artifact {
  if (!artifact.parts.some((p) => p.blob)) return artifact;
  const { filename, mediaType, size } = fileInfo(artifact);
  return { ...artifact, parts: [{ url, filename, mediaType, metadata: { [ARTIFACT_BYTES]: size } }] };
}

/** A log entry whose blob parts are shown as links to their artifact (webhooks get references). */
export function linkedEntry(entry: LoggedEvent, link: ArtifactLink): LoggedEvent {
  const { event } = entry;
  if (event.kind !== 'artifact' || !event.artifact.parts.some((p) => p.blob)) return entry;
  const url = link(entry.taskId, event.artifact.artifactId);
  const parts = event.artifact.parts.map((p): Part => {
    if (!p.blob) return p;
    const { blob, ...rest } = p;
    return { ...rest, url, metadata: { ...rest.metadata, [ARTIFACT_BYTES]: blob.size } };
  });
  return { ...entry, event: { ...event, artifact: { ...event.artifact, parts } } };
}
