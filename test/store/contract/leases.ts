import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../../src/engine/task.js';
import { type Contract, newTask, note, T0 } from './context.js';

/** claim, leases and deleteExpired. */
export function leaseContract(c: Contract): void {
  const { create, seqs, write } = c;
  describe('claim', () => {
    it('claims submitted tasks, moving each to working with one working status event', async () => {
      const a = await create({ createdAt: T0 + 1 });
      const b = await create({ createdAt: T0 + 2 });
      const claimed = await c.store.claim('w1', T0 + 10, 1000, 10);
      expect(claimed.map((x) => x.record.id).sort()).toEqual([a.id, b.id].sort());
      for (const one of claimed) {
        expect(one.interrupted).toBe(false);
        expect(one.leaseToken).toEqual(expect.any(String));
        expect(one.leaseToken.length).toBeGreaterThan(0);
        expect(one.record).toMatchObject({ state: 'working', attempts: 1, lastSeq: 3, updatedAt: T0 + 10 });
        expect(one.events).toEqual([
          { taskId: one.record.id, seq: 3, at: T0 + 10, event: { kind: 'status', state: 'working' } },
        ]);
        expect(await c.store.readEvents(one.record.id, 2, 10)).toEqual(one.events);
        expect(await c.store.getTask(one.record.id, T0 + 10)).toEqual(one.record);
      }
      expect(claimed[0]?.leaseToken).not.toBe(claimed[1]?.leaseToken);
    });

    it("gives a fresh claim the task's log as a read after it would, and a takeover none", async () => {
      const task = await create();
      await write(task.id, {
        from: ['submitted'],
        events: [note('a'), { kind: 'progress', progress: { percent: 5 } }],
      });
      const [fresh] = await c.store.claim('w1', T0 + 10, 1000, 10);
      expect(fresh?.log).toEqual((await c.store.getTaskWithLog(task.id, T0 + 10))?.log);
      expect(fresh?.log?.at(-1)).toEqual(fresh?.events[0]);
      const [takeover] = await c.store.claim('w2', T0 + 1011, 1000, 10);
      expect(takeover?.interrupted).toBe(true);
      expect(takeover?.log).toBeUndefined();
    });

    it('never claims a task twice while its lease is valid', async () => {
      await create();
      expect(await c.store.claim('w1', T0, 1000, 10)).toHaveLength(1);
      expect(await c.store.claim('w1', T0 + 1, 1000, 10)).toEqual([]);
      expect(await c.store.claim('w2', T0 + 999, 1000, 10)).toEqual([]);
    });

    it('claims a working task whose lease expired, with interrupted: true and a new token', async () => {
      const record = await create();
      const [first] = await c.store.claim('w1', T0, 1000, 10);
      const [second, ...rest] = await c.store.claim('w2', T0 + 1001, 1000, 10);
      expect(rest).toEqual([]);
      expect(second?.interrupted).toBe(true);
      expect(second?.record).toMatchObject({ id: record.id, state: 'working', attempts: 2 });
      expect(second?.leaseToken).not.toBe(first?.leaseToken);
      expect(second?.events).toEqual([]);
      // The dead runner's lease is gone: it can neither renew nor write.
      expect((await c.store.renewLease(record.id, first?.leaseToken ?? '', T0, T0 + 5000)).held).toBe(false);
      expect(
        await write(record.id, {
          from: ['working'],
          leaseToken: first?.leaseToken ?? '',
          events: [note('x')],
        }),
      ).toBeUndefined();
      expect(await seqs(record.id)).toEqual([1, 2, 3]);
      // And the new holder's lease is valid.
      expect(await c.store.claim('w3', T0 + 1500, 1000, 10)).toEqual([]);
    });

    it('claims only the skills its filter lets through, takeovers included', async () => {
      const echo = await create({ skill: 'echo', createdAt: T0 + 1 });
      const resize = await create({ skill: 'resize', createdAt: T0 + 2 });
      const ids = (claimed: { record: TaskRecord }[]) => claimed.map((x) => x.record.id);
      expect(await c.store.claim('w1', T0 + 10, 1000, 10, {}, { only: [] })).toEqual([]);
      expect(ids(await c.store.claim('w1', T0 + 10, 1000, 10, {}, { except: ['echo'] }))).toEqual([
        resize.id,
      ]);
      expect(ids(await c.store.claim('w1', T0 + 10, 1000, 10, {}, { only: ['resize'] }))).toEqual([]);
      // Once resize's lease ran out, a filter without it still takes only echo.
      const later = T0 + 2000;
      expect(ids(await c.store.claim('w2', later, 1000, 10, {}, { except: ['resize'] }))).toEqual([echo.id]);
      expect(ids(await c.store.claim('w2', later, 1000, 10, {}, { only: ['echo'] }))).toEqual([]);
      const [takeover, ...none] = await c.store.claim('w3', later, 1000, 10, {}, { only: ['resize', 'x'] });
      expect(none).toEqual([]);
      expect(takeover).toMatchObject({ interrupted: true, record: { id: resize.id, attempts: 2 } });
    });

    it('respects limit and claims each task once', async () => {
      for (let i = 0; i < 5; i++) await create({ createdAt: T0 + i });
      const first = await c.store.claim('w1', T0 + 10, 1000, 2);
      const second = await c.store.claim('w1', T0 + 10, 1000, 2);
      const third = await c.store.claim('w1', T0 + 10, 1000, 10);
      expect([first.length, second.length, third.length]).toEqual([2, 2, 1]);
      const ids = [...first, ...second, ...third].map((x) => x.record.id);
      expect(new Set(ids).size).toBe(5);
      expect(await c.store.claim('w1', T0 + 10, 1000, 10)).toEqual([]);
    });

    it('claims no task that waits for its caller or has ended', async () => {
      const parked = await create();
      const done = await create();
      await write(parked.id, {
        to: 'input-required',
        events: [{ kind: 'status', state: 'input-required' }],
      });
      await write(done.id, { to: 'completed', events: [{ kind: 'status', state: 'completed' }] });
      expect(await c.store.claim('w1', T0 + 10_000, 1000, 10)).toEqual([]);
    });

    it('claims no expired task, queued or with an expired lease', async () => {
      const running = await create({ expiresAt: T0 + 3000 });
      const [first] = await c.store.claim('w1', T0, 1000, 10);
      expect(first?.record.id).toBe(running.id);
      await create({ expiresAt: T0 + 100 });
      // The queued task has expired; the claimed one is still leased.
      expect(await c.store.claim('w2', T0 + 100, 1000, 10)).toEqual([]);
      // Long after its lease ran out the claimed one has expired too: nobody takes it over.
      expect(await c.store.claim('w2', T0 + 3000, 1000, 10)).toEqual([]);
      // Just before, it would have been taken over.
      expect((await c.store.claim('w2', T0 + 2999, 1000, 10)).map((x) => x.record.id)).toEqual([running.id]);
    });

    it('hands out no task twice to many parallel claims from several workers', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 30; i++) ids.add((await create({ createdAt: T0 + i })).id);
      const attempt = (now: number) =>
        Promise.all(
          Array.from({ length: 24 }, (_, i) => c.store.claim(`worker-${i % 4}`, now, 1000, 3)),
        ).then((batches) => batches.flat());
      const fresh = await attempt(T0 + 100);
      expect(fresh.map((x) => x.record.id).sort()).toEqual([...ids].sort());
      expect(fresh.every((x) => !x.interrupted)).toBe(true);
      // After every lease expired, each task is taken over exactly once too.
      const takeover = await attempt(T0 + 5000);
      expect(takeover.map((x) => x.record.id).sort()).toEqual([...ids].sort());
      expect(takeover.every((x) => x.interrupted)).toBe(true);
      for (const id of ids) {
        const statuses = (await c.store.readEvents(id, 0, 100)).filter(
          (e) => e.event.kind === 'status' && e.event.state === 'working',
        );
        expect(statuses).toHaveLength(1);
      }
    });
  });

  describe('leases', () => {
    it('renewLease extends a held lease and reports held: false for a wrong token', async () => {
      const record = await create();
      const [claim] = await c.store.claim('w1', T0, 1000, 1);
      const token = claim?.leaseToken ?? '';
      expect(await c.store.renewLease(record.id, token, T0, T0 + 5000)).toEqual({
        held: true,
        cancelRequested: false,
      });
      expect(await c.store.claim('w2', T0 + 2000, 1000, 10)).toEqual([]);
      expect((await c.store.renewLease(record.id, 'wrong', T0, T0 + 5000)).held).toBe(false);
      expect((await c.store.renewLease('nope', token, T0, T0 + 5000)).held).toBe(false);
    });

    it('renewLease reports cancelRequested after requestCancel', async () => {
      const record = await create();
      const [claim] = await c.store.claim('w1', T0, 1000, 1);
      await c.store.requestCancel(record.id);
      expect(await c.store.renewLease(record.id, claim?.leaseToken ?? '', T0, T0 + 500)).toEqual({
        held: true,
        cancelRequested: true,
      });
      expect((await c.store.getTask(record.id, T0))?.cancelRequested).toBe(true);
      await expect(c.store.requestCancel('nope')).resolves.toBe(false);
    });

    it('renewLease reports held: false once the task left working', async () => {
      const record = await create();
      const [claim] = await c.store.claim('w1', T0, 1000, 1);
      const token = claim?.leaseToken ?? '';
      await write(record.id, {
        from: ['working'],
        to: 'completed',
        leaseToken: token,
        events: [{ kind: 'status', state: 'completed' }],
      });
      expect((await c.store.renewLease(record.id, token, T0, T0 + 500)).held).toBe(false);
    });

    it('releaseLease makes the task claimable at once, as interrupted', async () => {
      const record = await create();
      const [claim] = await c.store.claim('w1', T0, 60_000, 1);
      const token = claim?.leaseToken ?? '';
      await c.store.releaseLease(record.id, 'wrong');
      expect(await c.store.claim('w2', T0 + 1, 60_000, 10)).toEqual([]);
      await c.store.releaseLease(record.id, token);
      expect((await c.store.renewLease(record.id, token, T0, T0 + 500)).held).toBe(false);
      const [again] = await c.store.claim('w2', T0 + 1, 60_000, 10);
      expect(again).toMatchObject({ interrupted: true, record: { id: record.id, state: 'working' } });
    });

    it('counts a takeover from a dead runner as an interruption, a graceful release not', async () => {
      const record = await create();
      const [fresh] = await c.store.claim('w1', T0, 1000, 1);
      expect(fresh?.record.interruptions).toBe(0);
      const [afterCrash] = await c.store.claim('w2', T0 + 1001, 1000, 1);
      expect(afterCrash?.record).toMatchObject({ id: record.id, interruptions: 1, attempts: 2 });
      await c.store.releaseLease(record.id, afterCrash?.leaseToken ?? '');
      const [afterRelease] = await c.store.claim('w3', T0 + 1002, 1000, 1);
      expect(afterRelease?.record).toMatchObject({ interruptions: 1, attempts: 3 });
    });

    it('renewLease reports held: false once the task has expired', async () => {
      const record = await create({ expiresAt: T0 + 1000 });
      const [claim] = await c.store.claim('w1', T0, 60_000, 1);
      const token = claim?.leaseToken ?? '';
      expect((await c.store.renewLease(record.id, token, T0 + 999, T0 + 5000)).held).toBe(true);
      expect((await c.store.renewLease(record.id, token, T0 + 1000, T0 + 5000)).held).toBe(false);
    });
  });

  describe('deleteExpired', () => {
    it('deletes expired tasks with their events and message ids in batches, returning the count', async () => {
      const expired: TaskRecord[] = [];
      for (let i = 0; i < 5; i++) expired.push(await create({ expiresAt: T0 + 100, messageId: `old-${i}` }));
      const kept = await create({ expiresAt: T0 + 10_000, messageId: 'young' });
      expect(await c.store.deleteExpired(T0 + 99, 10)).toBe(0);
      expect(await c.store.deleteExpired(T0 + 100, 2)).toBe(2);
      expect(await c.store.deleteExpired(T0 + 100, 2)).toBe(2);
      expect(await c.store.deleteExpired(T0 + 100, 2)).toBe(1);
      expect(await c.store.deleteExpired(T0 + 100, 2)).toBe(0);
      for (const [i, record] of expired.entries()) {
        expect(await c.store.getTask(record.id, T0)).toBeUndefined();
        expect(await c.store.getTaskWithLog(record.id, T0)).toBeUndefined();
        expect(await c.store.readEvents(record.id, 0, 100)).toEqual([]);
        expect(await c.store.findByMessageId('alice', `old-${i}`)).toBeUndefined();
      }
      expect(await c.store.getTask(kept.id, T0 + 100)).toEqual(kept);
      expect(await seqs(kept.id)).toEqual([1, 2]);
      expect((await c.store.findByMessageId('alice', 'young'))?.id).toBe(kept.id);
      // A deleted task's message id may create a new task.
      const { created } = await c.store.createTask(newTask({ messageId: 'old-0', createdAt: T0 + 200 }));
      expect(created).toBe(true);
    });

    it('deletes the message ids of follow-up messages too', async () => {
      const record = await create({ expiresAt: T0 + 100 });
      await c.store.write(
        { taskId: record.id, from: ['submitted'], events: [note('x')], at: T0 + 1 },
        { owner: 'alice', messageId: 'follow-up' },
      );
      expect(await c.store.deleteExpired(T0 + 100, 10)).toBe(1);
      expect(await c.store.findByMessageId('alice', 'follow-up')).toBeUndefined();
    });
  });
}
