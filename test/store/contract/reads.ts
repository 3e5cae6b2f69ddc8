import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/engine/events.js';
import { type Contract, note, T0 } from './context.js';

/** getTask, getTaskWithLog, readEvents and listTasks. */
export function readContract(c: Contract): void {
  const { create, seqs, write, listAll } = c;
  describe('getTask and getTaskWithLog', () => {
    it('hide a task once expiresAt <= now', async () => {
      const record = await create({ expiresAt: T0 + 1000 });
      expect(await c.store.getTask(record.id, T0 + 999)).toEqual(record);
      expect((await c.store.getTaskWithLog(record.id, T0 + 999))?.record).toEqual(record);
      expect(await c.store.getTask(record.id, T0 + 1000)).toBeUndefined();
      expect(await c.store.getTaskWithLog(record.id, T0 + 1000)).toBeUndefined();
      expect(await c.store.getTask(record.id, T0 + 5000)).toBeUndefined();
    });

    it('getTaskWithLog activeOnly: a task that has ended comes without its log; one that has not, with it', async () => {
      const active = await create();
      const ended = await create();
      await write(active.id, { events: [note('still going')] });
      await write(ended.id, {
        to: 'completed',
        events: [note('done'), { kind: 'status', state: 'completed' }],
      });
      const whole = await c.store.getTaskWithLog(ended.id, T0 + 20);
      expect(whole?.log.length).toBe(4);
      expect(await c.store.getTaskWithLog(ended.id, T0 + 20, 'alice', true)).toEqual({
        record: whole?.record,
        log: [],
      });
      // Ownership still decides first: another owner's task is missing, ended or not.
      expect(await c.store.getTaskWithLog(ended.id, T0 + 20, 'mallory', true)).toBeUndefined();
      expect(await c.store.getTaskWithLog(active.id, T0 + 20, 'alice', true)).toEqual(
        await c.store.getTaskWithLog(active.id, T0 + 20),
      );
      expect((await c.store.getTaskWithLog(active.id, T0 + 20, 'alice', true))?.log.length).toBe(3);
    });

    it('getTaskStamp gives owner, state, lastSeq and updatedAt, moving with every write, hidden once expired', async () => {
      const record = await create({ expiresAt: T0 + 1000 });
      expect(await c.store.getTaskStamp(record.id, T0)).toEqual({
        owner: 'alice',
        state: 'submitted',
        lastSeq: record.lastSeq,
        updatedAt: record.updatedAt,
        queued: { tenant: 'alice', skill: 'echo', queueAt: T0, pollIntervalMs: 1000, runAfter: undefined },
      });
      await c.store.write({ taskId: record.id, from: ['submitted'], events: [note('x')], at: T0 + 5 });
      expect(await c.store.getTaskStamp(record.id, T0 + 5)).toMatchObject({
        owner: 'alice',
        state: 'submitted',
        lastSeq: record.lastSeq + 1,
        updatedAt: T0 + 5,
      });
      // A write without events (a new poll interval) still moves updatedAt.
      await c.store.write({
        taskId: record.id,
        from: ['submitted'],
        pollIntervalMs: 50,
        events: [],
        at: T0 + 9,
      });
      expect((await c.store.getTaskStamp(record.id, T0 + 9))?.updatedAt).toBe(T0 + 9);
      expect(await c.store.getTaskStamp(record.id, T0 + 1000)).toBeUndefined();
      expect(await c.store.getTaskStamp('nope', T0)).toBeUndefined();
    });

    it('return undefined for an unknown id', async () => {
      expect(await c.store.getTask('nope', T0)).toBeUndefined();
      expect(await c.store.getTaskWithLog('nope', T0)).toBeUndefined();
    });

    it('getTaskWithLog gives the record and its log oldest first, without progress events', async () => {
      const record = await create();
      await write(record.id, { to: 'working', events: [{ kind: 'status', state: 'working' }] });
      const artifact: TaskEvent = {
        kind: 'artifact',
        artifact: { artifactId: 'a1', parts: [{ text: 'x' }] },
        append: false,
        lastChunk: true,
      };
      await write(record.id, {
        from: ['working'],
        progress: { percent: 50 },
        events: [{ kind: 'progress', progress: { percent: 50 } }, artifact],
      });
      const found = await c.store.getTaskWithLog(record.id, T0 + 10);
      expect(found?.record).toEqual(await c.store.getTask(record.id, T0 + 10));
      expect(found?.log.map((e) => e.seq)).toEqual([1, 2, 3, 5]);
      expect(found?.log.map((e) => e.event.kind)).toEqual(['message', 'status', 'status', 'artifact']);
      expect(found?.log[3]?.event).toEqual(artifact);
      // readEvents still has the progress event.
      expect((await c.store.readEvents(record.id, 0, 100)).map((e) => e.event.kind)).toContain('progress');
    });
  });

  describe('readEvents', () => {
    it('returns events with seq > afterSeq, oldest first, at most limit', async () => {
      const record = await create();
      await write(record.id, { events: [note('3'), note('4'), note('5')] });
      const page = await c.store.readEvents(record.id, 2, 2);
      expect(page.map((e) => e.seq)).toEqual([3, 4]);
      expect(page[0]?.event).toMatchObject({ kind: 'message', message: { parts: [{ text: '3' }] } });
      expect((await c.store.readEvents(record.id, 4, 10)).map((e) => e.seq)).toEqual([5]);
      expect(await c.store.readEvents(record.id, 5, 10)).toEqual([]);
      expect(await c.store.readEvents('nope', 0, 10)).toEqual([]);
    });

    it('keeps each task’s log apart', async () => {
      const a = await create();
      const b = await create();
      await write(b.id, { events: [note('b')] });
      expect(await seqs(a.id)).toEqual([1, 2]);
      expect((await c.store.readEvents(b.id, 0, 10)).every((e) => e.taskId === b.id)).toBe(true);
    });
  });

  describe('listTasks', () => {
    const base = { owner: 'alice', pageSize: 50, now: T0 + 100 };

    it('lists only the owner’s unexpired tasks, newest update first, with totalSize', async () => {
      const a1 = await create({ createdAt: T0 + 1 });
      const a2 = await create({ createdAt: T0 + 2 });
      const a3 = await create({ createdAt: T0 + 3 });
      await create({ owner: 'bob', createdAt: T0 + 4 });
      await create({ createdAt: T0 + 5, expiresAt: T0 + 50 });
      // An update moves a task to the front.
      await write(a1.id, { events: [note('bump')], at: T0 + 60 });
      const page = await c.store.listTasks(base);
      expect(page.records.map((r) => r.id)).toEqual([a1.id, a3.id, a2.id]);
      expect(page.totalSize).toBe(3);
      expect(page.nextPageToken).toBe('');
      expect(page.records.every((r) => r.owner === 'alice')).toBe(true);
      expect((await c.store.listTasks({ ...base, owner: 'carol' })).totalSize).toBe(0);
      expect((await c.store.listTasks({ ...base, owner: 'carol' })).records).toEqual([]);
    });

    it('filters by contextId, state and statusAfter', async () => {
      const x1 = await create({ contextId: 'x', createdAt: T0 + 1 });
      const x2 = await create({ contextId: 'x', createdAt: T0 + 2 });
      const y1 = await create({ contextId: 'y', createdAt: T0 + 3 });
      await write(x1.id, { to: 'canceled', events: [{ kind: 'status', state: 'canceled' }], at: T0 + 40 });

      const byContext = await c.store.listTasks({ ...base, contextId: 'x' });
      expect(byContext.records.map((r) => r.id)).toEqual([x1.id, x2.id]);
      expect(byContext.totalSize).toBe(2);

      const byState = await c.store.listTasks({ ...base, state: 'submitted' });
      expect(byState.records.map((r) => r.id)).toEqual([y1.id, x2.id]);
      expect(byState.totalSize).toBe(2);

      const both = await c.store.listTasks({ ...base, contextId: 'x', state: 'canceled' });
      expect(both.records.map((r) => r.id)).toEqual([x1.id]);

      const recent = await c.store.listTasks({ ...base, statusAfter: T0 + 20 });
      expect(recent.records.map((r) => r.id)).toEqual([x1.id]);
      expect(recent.totalSize).toBe(1);

      const none = await c.store.listTasks({ ...base, contextId: 'y', state: 'canceled' });
      expect(none).toEqual({ records: [], nextPageToken: '', totalSize: 0 });
    });

    it('pages with pageToken until nextPageToken is empty, without duplicates or gaps', async () => {
      const ids: string[] = [];
      // Several tasks share an updatedAt, so the cursor must break ties.
      for (let i = 0; i < 11; i++) ids.push((await create({ createdAt: T0 + Math.floor(i / 3) })).id);
      await create({ owner: 'bob' });
      const first = await c.store.listTasks({ ...base, pageSize: 4 });
      expect(first.records).toHaveLength(4);
      expect(first.totalSize).toBe(11);
      expect(first.nextPageToken).not.toBe('');
      const second = await c.store.listTasks({ ...base, pageSize: 4, pageToken: first.nextPageToken });
      expect(second.totalSize).toBe(11);

      const all = await listAll({ ...base, pageSize: 4 });
      expect(all).toHaveLength(11);
      expect(new Set(all.map((r) => r.id))).toEqual(new Set(ids));
      for (let i = 1; i < all.length; i++) {
        expect((all[i - 1]?.updatedAt ?? 0) >= (all[i]?.updatedAt ?? 0)).toBe(true);
      }
      for (const size of [1, 2, 3, 11, 12]) {
        expect((await listAll({ ...base, pageSize: size })).map((r) => r.id)).toEqual(all.map((r) => r.id));
      }
      const filtered = await listAll({ ...base, pageSize: 2, statusAfter: T0 + 1 });
      expect(filtered).toHaveLength(5);
    });

    it("rejects an invalid pageToken with the port's InvalidPageToken", async () => {
      await create();
      for (const pageToken of ['not-a-token', '!!!', Buffer.from('abc:def').toString('base64url')]) {
        const error = await c.store.listTasks({ ...base, pageToken }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error, `pageToken ${pageToken}`).toMatchObject({ name: 'InvalidPageToken' });
      }
    });
  });
}
