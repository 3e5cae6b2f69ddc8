import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/engine/events.js';
import { BLOB_PIECE_BYTES, type GuardedWrite, isQuotaExceeded } from '../../../src/engine/store-port.js';
import { type Contract, HOUR, T0 } from './context.js';

/** An artifact event whose one part is stored out of the log, with its content. */
function blobChunk(size: number, fill = 7): { event: TaskEvent; data: Buffer } {
  const data = Buffer.alloc(size, fill);
  return {
    event: {
      kind: 'artifact',
      artifact: { artifactId: 'file', parts: [{ blob: { kind: 'raw', size }, filename: 'f.bin' }] },
      append: false,
      lastChunk: true,
    },
    data,
  };
}

/** Large artifacts (blob pieces), stored bytes per owner and their quota, ownership-scoped reads. */
export function blobContract(c: Contract): void {
  const { create, seqs, write } = c;
  const working = (w: Partial<GuardedWrite>): Partial<GuardedWrite> => ({ from: ['submitted'], ...w });
  /** Writes a blob chunk of `size` bytes to the task, counted for `owner` against a quota of 1000. */
  const storeChunk = (taskId: string, size: number, owner = 'alice') => {
    const { event, data } = blobChunk(size);
    return write(
      taskId,
      working({ events: [event], blobs: [data], storage: { owner, bytes: size, quota: 1000 } }),
    );
  };

  describe('blob parts', () => {
    it('stores a blob part in 1 MiB pieces keyed by its event, read back piece by piece', async () => {
      const task = await create();
      const size = 2 * BLOB_PIECE_BYTES + 10;
      const { event, data } = blobChunk(size);
      data.write('head', 0);
      data.write('tail', size - 4);
      const result = await write(task.id, working({ events: [event], blobs: [data] }));
      const seq = result?.events[0]?.seq as number;
      expect(result?.events[0]?.event).toEqual(event); // the log keeps the reference only
      const pieces = await Promise.all([0, 1, 2].map((n) => c.store.readBlobPiece(task.id, seq, 0, n)));
      expect(pieces.map((p) => p?.length)).toEqual([BLOB_PIECE_BYTES, BLOB_PIECE_BYTES, 10]);
      expect(Buffer.concat(pieces as Buffer[]).equals(data)).toBe(true);
      expect(await c.store.readBlobPiece(task.id, seq, 0, 3)).toBeUndefined();
      expect(await c.store.readBlobPiece(task.id, seq, 1, 0)).toBeUndefined();
    });

    it('a write refused by its guard stores no piece', async () => {
      const task = await create();
      const { event, data } = blobChunk(100);
      expect(await write(task.id, { from: ['working'], events: [event], blobs: [data] })).toBeUndefined();
      expect(await c.store.readBlobPiece(task.id, 3, 0, 0)).toBeUndefined();
    });
  });

  describe('stored bytes and the quota', () => {
    it('refuses a write that would take the owner past its quota, whole: no event, no piece, no bytes counted', async () => {
      const a = await create();
      const b = await create();
      await storeChunk(a.id, 600);
      const err = await storeChunk(b.id, 500).catch((e: unknown) => e);
      expect(isQuotaExceeded(err)).toBe(true);
      expect(err).toMatchObject({ stored: 600, adding: 500, quota: 1000 });
      expect(await seqs(b.id)).toEqual([1, 2]);
      expect(await c.store.readBlobPiece(b.id, 3, 0, 0)).toBeUndefined();
      // What fits still goes in: the refused bytes were not counted.
      const ok = await storeChunk(b.id, 400);
      expect(ok?.events).toHaveLength(1);
    });

    it('refuses a write whose artifact is in the log past the quota, whole, in the same way', async () => {
      const a = await create();
      await storeChunk(a.id, 900);
      const inline: TaskEvent = {
        kind: 'artifact',
        artifact: { artifactId: 'csv', parts: [{ text: 'x'.repeat(200) }] },
        append: false,
        lastChunk: true,
      };
      const over = write(a.id, {
        from: ['submitted'],
        to: 'completed',
        events: [inline],
        storage: { owner: 'alice', bytes: 200, quota: 1000 },
      });
      await expect(over).rejects.toMatchObject({
        name: 'QuotaExceeded',
        stored: 900,
        adding: 200,
        quota: 1000,
      });
      expect(await seqs(a.id)).toEqual([1, 2, 3]);
      expect((await c.store.getTask(a.id, T0))?.state).toBe('submitted');
      // Nothing of it was counted: 100 bytes still fit.
      const fits = await write(a.id, working({ storage: { owner: 'alice', bytes: 100, quota: 1000 } }));
      expect(fits?.record.id).toBe(a.id);
    });

    it('a write that replaces an artifact drops the pieces of the events it names, and frees their bytes', async () => {
      const a = await create();
      const b = await create();
      const first = await storeChunk(a.id, 600);
      const oldSeq = first?.events[0]?.seq as number;
      const { event, data } = blobChunk(700, 9);
      const again = await write(
        a.id,
        working({
          events: [event],
          blobs: [data],
          dropBlobs: [oldSeq],
          storage: { owner: 'alice', bytes: 700 - 600, quota: 1000 },
        }),
      );
      const newSeq = again?.events[0]?.seq as number;
      expect(await c.store.readBlobPiece(a.id, oldSeq, 0, 0)).toBeUndefined();
      expect((await c.store.readBlobPiece(a.id, newSeq, 0, 0))?.equals(data)).toBe(true);
      // 700 stored, not 1300: 300 more still fit, 301 would not.
      await expect(storeChunk(b.id, 301)).rejects.toMatchObject({ name: 'QuotaExceeded', stored: 700 });
      expect((await storeChunk(b.id, 300))?.events).toHaveLength(1);
      // A write that frees bytes goes in even while its owner is past a (since lowered) quota.
      const freeing = await write(b.id, working({ storage: { owner: 'alice', bytes: -100, quota: 500 } }));
      expect(freeing?.record.id).toBe(b.id);
    });

    it('counts per owner, and gives an expired task bytes back when it is deleted', async () => {
      const short = await create({ expiresAt: T0 + 100 });
      const other = await create({ owner: 'bob' });
      await storeChunk(short.id, 800);
      await write(other.id, working({ storage: { owner: 'bob', bytes: 900, quota: 1000 } }));
      const later = await create({ messageId: 'later' });
      const over = write(later.id, working({ storage: { owner: 'alice', bytes: 300, quota: 1000 } }));
      await expect(over).rejects.toMatchObject({ name: 'QuotaExceeded' });
      expect(await c.store.deleteExpired(T0 + 200, 10)).toBe(1);
      expect(await c.store.readBlobPiece(short.id, 3, 0, 0)).toBeUndefined();
      const again = await c.store.write({
        taskId: later.id,
        from: ['submitted'],
        events: [],
        at: T0 + 300,
        storage: { owner: 'alice', bytes: 300, quota: 1000 },
      });
      expect(again?.record.id).toBe(later.id);
    });
  });

  describe('getTaskWithLog with an owner', () => {
    it("reads the caller's own task, and another owner's not at all (as a missing one)", async () => {
      const task = await create();
      expect((await c.store.getTaskWithLog(task.id, T0, 'alice'))?.record.id).toBe(task.id);
      expect(await c.store.getTaskWithLog(task.id, T0, 'mallory')).toBeUndefined();
      expect(await c.store.getTaskWithLog(task.id, T0 + HOUR, 'alice')).toBeUndefined();
    });
  });
}
