import { describe, expect, it } from 'vitest';
import { ReadBatch } from '../src/store/postgres/read-batch.js';

describe('ReadBatch', () => {
  it('sends the reads asked for in one turn as one batch, each answered in its place', async () => {
    const runs: number[][] = [];
    const batch = new ReadBatch(async (qs: number[]) => {
      runs.push(qs);
      return qs.map((q) => q * 10);
    });
    const first = await Promise.all([batch.read(1), batch.read(2), batch.read(3)]);
    const second = await batch.read(4);
    expect(first).toEqual([10, 20, 30]);
    expect(second).toBe(40);
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });

  it('sends a full batch at once, and the rest in the next', async () => {
    const runs: number[][] = [];
    const batch = new ReadBatch(async (qs: number[]) => {
      runs.push(qs);
      return qs;
    }, 2);
    expect(await Promise.all([1, 2, 3, 4, 5].map((q) => batch.read(q)))).toEqual([1, 2, 3, 4, 5]);
    expect(runs).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("fails every read of a batch that failed, and only that batch's", async () => {
    let calls = 0;
    const batch = new ReadBatch(async (qs: string[]) => {
      calls++;
      if (calls === 1) throw new Error('connection lost');
      return qs;
    });
    const failed = await Promise.allSettled([batch.read('a'), batch.read('b')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await batch.read('c')).toBe('c');
  });
});
