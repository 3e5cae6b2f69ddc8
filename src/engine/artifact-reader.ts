import { type ArtifactFileInfo, fileInfo, fromBlobPart, type LocatedBlob, partContent } from './artifacts.js';
import type { LoggedEvent } from './events.js';
import { BLOB_PIECE_BYTES, type TaskStore } from './store-port.js';
import type { Artifact, Part } from './task.js';

/** An artifact as one file: what it is called and holds, and its bytes read a piece at a time. */
export interface ArtifactFile extends ArtifactFileInfo {
  /**
   * The bytes from `start` up to (not including) `end`, in pieces of at most one stored piece
   * (1 MiB): the reader holds one at a time, whatever the file's size.
   */
  read(start?: number, end?: number): AsyncGenerator<Buffer>;
}

/** Reads an artifact folded from the log ({@link foldArtifacts}) as one file. */
export function artifactFile(store: TaskStore, taskId: string, artifact: Artifact): ArtifactFile {
  const info = fileInfo(artifact);
  async function* read(start = 0, end = info.size): AsyncGenerator<Buffer> {
    let offset = 0; // where the current part starts in the file
    for (const part of artifact.parts) {
      if (offset >= end) return;
      const blob = part.blob as LocatedBlob | undefined;
      const inline = blob ? undefined : partContent(part);
      const size = blob ? blob.size : (inline as Buffer).length;
      const from = Math.max(start - offset, 0);
      const to = Math.min(end - offset, size);
      if (from < to) {
        if (inline) yield inline.subarray(from, to);
        else if (blob) yield* readBlob(store, taskId, blob, from, to);
      }
      offset += size;
    }
  }
  return { ...info, read };
}

async function* readBlob(
  store: TaskStore,
  taskId: string,
  blob: LocatedBlob,
  from: number,
  to: number,
): AsyncGenerator<Buffer> {
  for (let piece = Math.floor(from / BLOB_PIECE_BYTES); piece * BLOB_PIECE_BYTES < to; piece++) {
    const data = await store.readBlobPiece(taskId, blob.seq, blob.part, piece);
    // The task was swept while its file was being read: end short rather than make bytes up.
    if (!data) throw new ContentGone(taskId);
    const base = piece * BLOB_PIECE_BYTES;
    yield data.subarray(Math.max(from - base, 0), Math.min(to - base, data.length));
  }
}

/** Stored content that is no longer there: its task expired, or (for an old event) it was replaced. */
class ContentGone extends Error {
  constructor(taskId: string) {
    super(`artifact content of task ${taskId} is gone (the task expired)`);
  }
}

/** A blob part whose content is larger than this streams as a link to its artifact, not inline. */
export const MAX_STREAMED_PART_BYTES = 8 * 2 ** 20;

/** An artifact chunk whose content lives out of the log, as blobs: it is read back to be streamed. */
export const storedApart = ({ event }: LoggedEvent): boolean =>
  event.kind === 'artifact' && event.artifact.parts.some((p) => p.blob);

/**
 * A log entry with the content of its blob parts read back, as the skill wrote them: artifact
 * chunks stream as they were written (a part past {@link MAX_STREAMED_PART_BYTES} as `link`).
 */
export async function withContent(
  store: TaskStore,
  entry: LoggedEvent,
  link: (artifactId: string) => string,
): Promise<LoggedEvent> {
  const { event } = entry;
  if (event.kind !== 'artifact' || !storedApart(entry)) return entry;
  const parts: Part[] = [];
  for (const [index, p] of event.artifact.parts.entries()) {
    if (!p.blob) {
      parts.push(p);
      continue;
    }
    const { blob, ...rest } = p;
    const linked = { ...rest, url: link(event.artifact.artifactId) };
    if (blob.size > MAX_STREAMED_PART_BYTES) {
      parts.push(linked);
      continue;
    }
    const located: LocatedBlob = { ...blob, seq: entry.seq, part: index };
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of readBlob(store, entry.taskId, located, 0, blob.size)) chunks.push(chunk);
    } catch (err) {
      // An old chunk of an artifact written again since: its content was dropped; the link shows what it is now.
      if (!(err instanceof ContentGone)) throw err;
      parts.push(linked);
      continue;
    }
    parts.push(fromBlobPart(p, Buffer.concat(chunks)));
  }
  return { ...entry, event: { ...event, artifact: { ...event.artifact, parts } } };
}
