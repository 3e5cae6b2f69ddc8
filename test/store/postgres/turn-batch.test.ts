import { describe, expect, it } from 'vitest';
import { TurnBatch } from '../../../src/store/postgres/turn-batch.js';

describe('TurnBatch', () => {
  it('sends the items asked for in one turn as one batch, each answered in its place', async () => {
    const runs: number[][] = [];
    const batch = new TurnBatch(async (qs: number[]) => {
      runs.push(qs);
      return qs.map((q) => q * 10);
    });
    const first = await Promise.all([batch.add(1), batch.add(2), batch.add(3)]);
    const second = await batch.add(4);
    expect(first).toEqual([10, 20, 30]);
    expect(second).toBe(40);
    expect(runs).toEqual([[1, 2, 3], [4]]);
  });

  it('sends a full batch at once, and the rest in the next', async () => {
    const runs: number[][] = [];
    const batch = new TurnBatch(async (qs: number[]) => {
      runs.push(qs);
      return qs;
    }, 2);
    expect(await Promise.all([1, 2, 3, 4, 5].map((q) => batch.add(q)))).toEqual([1, 2, 3, 4, 5]);
    expect(runs).toEqual([[1, 2], [3, 4], [5]]);
  });

  it("fails every read of a batch that failed, and only that batch's", async () => {
    let calls = 0;
    const batch = new TurnBatch(async (qs: string[]) => {
      calls++;
      if (calls === 1) throw new Error('connection lost');
      return qs;
    });
    const failed = await Promise.allSettled([batch.add('a'), batch.add('b')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(await batch.add('c')).toBe('c');
  });
});
