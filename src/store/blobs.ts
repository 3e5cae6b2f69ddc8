import type { TaskEvent } from '../engine/events.js';
import { BLOB_PIECE_BYTES, type GuardedWrite, QuotaExceeded } from '../engine/store-port.js';

/** One stored piece of a blob part: the `piece`-th of part `part` of event `seq`. */
export interface BlobPiece {
  seq: number;
  part: number;
  piece: number;
  data: Buffer;
}

/**
 * Cuts a write's blob contents into the pieces both stores keep, keyed by the event that holds each
 * part. `blobs` follows the blob parts of `events` in order; `firstSeq` is the first event's seq.
 */
export function blobPieces(
  events: readonly TaskEvent[],
  firstSeq: number,
  blobs: readonly Buffer[],
): BlobPiece[] {
  const pieces: BlobPiece[] = [];
  let next = 0;
  events.forEach((event, i) => {
    if (event.kind !== 'artifact') return;
    event.artifact.parts.forEach((p, part) => {
      if (!p.blob) return;
      const data = blobs[next++];
      if (!data || data.length !== p.blob.size) {
        throw new Error(`blob ${next - 1} of the write does not match its part (${p.blob.size} bytes)`);
      }
      for (let at = 0, piece = 0; at < data.length || piece === 0; at += BLOB_PIECE_BYTES, piece++) {
        pieces.push({ seq: firstSeq + i, part, piece, data: data.subarray(at, at + BLOB_PIECE_BYTES) });
      }
    });
  });
  if (next !== blobs.length)
    throw new Error(`the write carries ${blobs.length} blobs for ${next} blob parts`);
  return pieces;
}

/**
 * Refuses a write whose artifact bytes took its owner's total (`total`, this write's bytes included)
 * past its quota. Thrown inside the write's transaction, so the refused write, its bytes included,
 * rolls back; the owner row's lock makes the total exact however many writers race.
 */
export function refuseOverQuota(total: number, { bytes, quota }: NonNullable<GuardedWrite['storage']>): void {
  if (quota !== undefined && quota > 0 && bytes > 0 && total > quota)
    throw new QuotaExceeded(total - bytes, bytes, quota);
}
