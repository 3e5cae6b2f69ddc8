import { describe, expect, it } from 'vitest';
import { type Contract, note, T0, userMessage } from './context.js';

/**
 * Conditional writes (the generations extension, A2A 1.1 draft 3.2.7): a write or a cancel request
 * naming a generation applies only while the task's log ends there, decided by the store in the
 * write itself (two writes naming the same generation: one applies).
 */
export function generationContract(c: Contract): void {
  const { create, seqs, write } = c;
  describe('conditional writes (generation)', () => {
    it("a write naming the task's generation applies; one naming a stale generation writes nothing", async () => {
      const record = await create();
      expect(record.lastSeq).toBe(2);
      const applied = await write(record.id, { generation: 2, events: [note('at 2')] });
      expect(applied?.record.lastSeq).toBe(3);
      expect(
        await write(record.id, { generation: 2, to: 'canceled', events: [note('late')] }),
      ).toBeUndefined();
      expect(await c.store.getTask(record.id, T0 + 10)).toMatchObject({ state: 'submitted', lastSeq: 3 });
      expect(await seqs(record.id)).toEqual([1, 2, 3]);
      // A generation the task has not reached yet matches nothing either.
      expect(await write(record.id, { generation: 9, events: [note('ahead')] })).toBeUndefined();
      expect((await write(record.id, { generation: 3, events: [note('at 3')] }))?.record.lastSeq).toBe(4);
    });

    it('of two writes naming the same generation, exactly one applies', async () => {
      const record = await create();
      const results = await Promise.all(
        [1, 2, 3, 4].map((n) => write(record.id, { generation: 2, events: [note(`racer ${n}`)] })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await seqs(record.id)).toEqual([1, 2, 3]);
    });

    it('a delivered message retried with its (now stale) generation is the duplicate, not a conflict', async () => {
      const record = await create();
      const key = { owner: 'alice', messageId: 'answer-1' };
      const message = { kind: 'message' as const, message: userMessage('answer-1') };
      const first = await c.store.write(
        { taskId: record.id, from: ['submitted'], generation: 2, events: [message], at: T0 + 20 },
        key,
      );
      expect(first?.duplicate).toBeFalsy();
      expect(first?.record.lastSeq).toBe(3);
      // Its answer was lost; the caller sends it again, with the generation it had then.
      const retry = await c.store.write(
        { taskId: record.id, from: ['submitted'], generation: 2, events: [message], at: T0 + 30 },
        key,
      );
      expect(retry).toMatchObject({ duplicate: true, events: [] });
      expect(await seqs(record.id)).toEqual([1, 2, 3]);
    });

    it('a stale conditional write with a message id records no delivery: the id stays free', async () => {
      const record = await create();
      const key = { owner: 'alice', messageId: 'answer-2' };
      const message = { kind: 'message' as const, message: userMessage('answer-2') };
      const stale = await c.store.write(
        { taskId: record.id, from: ['submitted'], generation: 1, events: [message], at: T0 + 20 },
        key,
      );
      expect(stale).toBeUndefined();
      expect(await c.store.findByMessageId('alice', 'answer-2')).toBeUndefined();
    });

    it('requestCancel with a generation marks the task only at that generation', async () => {
      const record = await create();
      expect(await c.store.requestCancel(record.id, 1)).toBe(false);
      expect((await c.store.getTask(record.id, T0))?.cancelRequested).toBe(false);
      expect(await c.store.requestCancel(record.id, 2)).toBe(true);
      expect((await c.store.getTask(record.id, T0))?.cancelRequested).toBe(true);
      expect(await c.store.requestCancel('nope', 2)).toBe(false);
      expect(await c.store.requestCancel(record.id)).toBe(true);
    });
  });
}
