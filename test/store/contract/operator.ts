import { describe, expect, it } from 'vitest';
import { ATTEMPTS_KEPT, type OperatorFilter } from '../../../src/engine/operator-port.js';
import type { NotificationKey, PushConfig } from '../../../src/engine/push.js';
import type { TaskRecord } from '../../../src/engine/task.js';
import { type Contract, HOUR, note, T0 } from './context.js';

const hook = (taskId: string, id = 'x'): PushConfig => ({
  taskId,
  id,
  url: `https://hooks.example/${id}`,
  allEvents: true,
  format: 'a2a/1.0',
  createdAt: T0 + 1,
});

/** The operator console's reads: every owner's tasks, delivery attempts, the outbox, activity. */
export function operatorContract(c: Contract): void {
  const { create, write } = c;
  /** Follows pageToken to the end; the ids in the order the pages gave them. */
  async function walk(filter: Omit<OperatorFilter, 'pageToken' | 'now'>, now = T0): Promise<string[]> {
    const ids: string[] = [];
    let pageToken: string | undefined;
    for (let pages = 0; pages < 200; pages++) {
      const page = await c.store.operator.listAllTasks({ ...filter, pageToken, now });
      expect(page.records.length).toBeLessThanOrEqual(filter.pageSize);
      ids.push(...page.records.map((r) => r.id));
      if (page.nextPageToken === '') return ids;
      pageToken = page.nextPageToken;
    }
    throw new Error('listAllTasks never returned an empty nextPageToken');
  }
  /** Tasks of three owners, two skills, one created per ms from T0 + 1; some updated later. */
  async function seed(): Promise<TaskRecord[]> {
    const made: TaskRecord[] = [];
    for (let i = 0; i < 9; i++) {
      made.push(
        await create({
          owner: ['alice', 'bob', 'carol'][i % 3],
          skill: i < 5 ? 'echo' : 'export',
          createdAt: T0 + 1 + i,
          // Two share an update time: the id breaks the tie, and paging must not lose either.
          id: `task-${i}`,
        }),
      );
    }
    return made;
  }
  const newestFirst = (records: TaskRecord[]) =>
    [...records].sort((a, b) => b.updatedAt - a.updatedAt || (b.id < a.id ? -1 : 1)).map((r) => r.id);

  describe('listAllTasks', () => {
    it("lists every owner's tasks newest first, a page at a time, each exactly once", async () => {
      const made = await seed();
      // Same updatedAt for two tasks: ties are ordered by id.
      await write('task-2', { to: 'working', events: [], at: T0 + 100 });
      await write('task-7', { to: 'working', events: [], at: T0 + 100 });
      const now = [...made];
      now[2] = { ...now[2], updatedAt: T0 + 100 } as TaskRecord;
      now[7] = { ...now[7], updatedAt: T0 + 100 } as TaskRecord;
      for (const pageSize of [1, 2, 4, 100]) {
        expect(await walk({ pageSize })).toEqual(newestFirst(now));
      }
      const first = await c.store.operator.listAllTasks({ pageSize: 3, now: T0 });
      expect(first.records.map((r) => r.id)).toEqual(['task-7', 'task-2', 'task-8']);
      expect(first.records[0]).toMatchObject({ owner: 'bob', state: 'working', skill: 'export' });
      expect(first.orderedBy).toBe('updatedAt');
    });

    it('filters by state, skill, owner, created and updated ranges and text in the id, together', async () => {
      await seed();
      await write('task-4', { to: 'working', events: [], at: T0 + 50 });
      await write('task-5', { to: 'working', events: [], at: T0 + 60 });
      expect(await walk({ pageSize: 1, state: 'working' })).toEqual(['task-5', 'task-4']);
      expect(await walk({ pageSize: 2, skill: 'export' })).toEqual(['task-5', 'task-8', 'task-7', 'task-6']);
      expect(await walk({ pageSize: 2, owner: 'alice' })).toEqual(['task-6', 'task-3', 'task-0']);
      expect(await walk({ pageSize: 2, owner: 'bob', state: 'working' })).toEqual(['task-4']);
      expect(await walk({ pageSize: 2, createdAfter: T0 + 3, createdBefore: T0 + 7 })).toEqual([
        'task-5',
        'task-4',
        'task-3',
      ]);
      // With a created range, newest created first (task-4 and task-5 were updated last).
      expect(await walk({ pageSize: 2, createdAfter: T0 })).toEqual(
        [8, 7, 6, 5, 4, 3, 2, 1, 0].map((i) => `task-${i}`),
      );
      expect(await walk({ pageSize: 1, createdAfter: T0, updatedAfter: T0 + 8 })).toEqual([
        'task-8',
        'task-5',
        'task-4',
      ]);
      expect(
        await walk({ pageSize: 1, createdBefore: T0 + 9, updatedBefore: T0 + 55, owner: 'bob' }),
      ).toEqual(['task-7', 'task-4', 'task-1']);
      expect(
        (await c.store.operator.listAllTasks({ pageSize: 1, createdAfter: T0, now: T0 })).orderedBy,
      ).toBe('createdAt');
      expect(await walk({ pageSize: 2, updatedAfter: T0 + 8, updatedBefore: T0 + 60 })).toEqual([
        'task-4',
        'task-8',
      ]);
      expect(await walk({ pageSize: 2, idContains: 'k-1' })).toEqual(['task-1']);
      expect(await walk({ pageSize: 2, idContains: '%' })).toEqual([]);
      expect(await walk({ pageSize: 2, skill: 'echo', state: 'submitted', owner: 'carol' })).toEqual([
        'task-2',
      ]);
    });

    it('leaves out expired tasks and refuses a page token it did not give', async () => {
      await create({ id: 'short', expiresAt: T0 + 10 });
      await create({ id: 'long', expiresAt: T0 + HOUR });
      expect(await walk({ pageSize: 10 }, T0 + 10)).toEqual(['long']);
      await expect(
        c.store.operator.listAllTasks({ pageSize: 10, now: T0, pageToken: 'bm9wZQ' }),
      ).rejects.toMatchObject({
        name: 'InvalidPageToken',
      });
    });
  });

  it('countTasksByState counts every state held', async () => {
    await seed();
    await write('task-1', { to: 'working', events: [], at: T0 + 50 });
    await write('task-1', { from: ['working'], to: 'completed', events: [], at: T0 + 60 });
    await write('task-2', { to: 'canceled', events: [], at: T0 + 60 });
    expect(await c.store.operator.countTasksByState()).toEqual({ submitted: 7, completed: 1, canceled: 1 });
  });

  describe('delivery attempts, the outbox and redelivery', () => {
    async function queued(): Promise<{ id: string; at: (seq: number) => NotificationKey }> {
      const task = await create();
      await c.store.putPushConfig(hook(task.id));
      await write(task.id, { events: [note('one'), note('two')], at: T0 + 10 });
      return { id: task.id, at: (seq) => ({ taskId: task.id, configId: 'x', seq }) };
    }

    it('keeps each settled attempt with its status and error, newest first, and not one settled without', async () => {
      const { id, at } = await queued();
      await c.store.claimNotifications(T0 + 100, 1000, 10);
      await c.store.settleNotification(
        at(3),
        { kind: 'retry', at: T0 + 500, error: 'HTTP 503' },
        { attempt: 1, at: T0 + 100, durationMs: 12, status: 503 },
      );
      await c.store.claimNotifications(T0 + 500, 1000, 10);
      await c.store.settleNotification(
        at(3),
        { kind: 'delivered' },
        { attempt: 2, at: T0 + 500, durationMs: 7, status: 204 },
      );
      await c.store.claimNotifications(T0 + 600, 1000, 10);
      await c.store.settleNotification(
        at(4),
        { kind: 'dead', at: T0 + 610, error: 'connection refused' },
        {
          attempt: 1,
          at: T0 + 600,
          durationMs: 3,
        },
      );
      await c.store.settleNotification(at(4), { kind: 'dead', at: T0 + 610, error: 'again' });
      expect(await c.store.operator.listAttempts(id, 10)).toEqual([
        { ...at(4), attempt: 1, at: T0 + 600, durationMs: 3, outcome: 'dead', error: 'connection refused' },
        { ...at(3), attempt: 2, at: T0 + 500, durationMs: 7, status: 204, outcome: 'delivered' },
        {
          ...at(3),
          attempt: 1,
          at: T0 + 100,
          durationMs: 12,
          status: 503,
          outcome: 'retry',
          error: 'HTTP 503',
        },
      ]);
      expect(await c.store.operator.listAttempts(id, 1)).toHaveLength(1);
      expect(await c.store.operator.listAttempts('nope', 10)).toEqual([]);
    });

    it(`keeps the newest ${ATTEMPTS_KEPT} attempts of a task, and deletes them with it`, async () => {
      const { id, at } = await queued();
      for (let i = 1; i <= ATTEMPTS_KEPT + 5; i++) {
        await c.store.settleNotification(
          at(3),
          { kind: 'retry', at: T0 + i, error: `try ${i}` },
          { attempt: i, at: T0 + i, durationMs: 1, status: 500 },
        );
      }
      const kept = await c.store.operator.listAttempts(id, 1000);
      expect(kept).toHaveLength(ATTEMPTS_KEPT);
      expect(kept[0]?.attempt).toBe(ATTEMPTS_KEPT + 5);
      expect(kept.at(-1)?.attempt).toBe(6);
      await c.store.deleteExpired(T0 + 2 * HOUR, 10);
      expect(await c.store.operator.listAttempts(id, 1000)).toEqual([]);
    });

    it('lists the outbox (pending and dead) and deliver-again makes a dead letter due at once', async () => {
      const { id, at } = await queued();
      await c.store.claimNotifications(T0 + 100, 1000, 10);
      await c.store.settleNotification(at(3), { kind: 'dead', at: T0 + 200, error: 'HTTP 410' });
      const outbox = await c.store.operator.listOutbox(id);
      expect(outbox).toEqual([
        {
          ...at(3),
          createdAt: T0 + 10,
          attempts: 1,
          nextAttemptAt: T0 + 10,
          lastError: 'HTTP 410',
          deadAt: T0 + 200,
        },
        { ...at(4), createdAt: T0 + 10, attempts: 0, nextAttemptAt: T0 + 10 },
      ]);
      // seq 4 goes out meanwhile; then the dead letter comes back, from attempt 1.
      const [four] = await c.store.claimNotifications(T0 + 300, 1000, 10);
      expect(four).toMatchObject(at(4));
      await c.store.settleNotification(at(4), { kind: 'delivered' });
      expect(await c.store.operator.redeliver(at(3), T0 + 400)).toBe(true);
      expect(await c.store.operator.redeliver(at(3), T0 + 400)).toBe(false); // no longer dead
      const [again, ...rest] = await c.store.claimNotifications(T0 + 400, 1000, 10);
      expect(rest).toEqual([]);
      expect(again).toMatchObject({ ...at(3), attempts: 1, createdAt: T0 + 400 });
      expect(await c.store.operator.redeliver(at(4), T0 + 400)).toBe(false); // delivered: gone
      expect(await c.store.operator.redeliver({ ...at(3), taskId: 'nope' }, T0 + 400)).toBe(false);
    });

    it('does not revive a dead letter whose webhook was deleted', async () => {
      const { at } = await queued();
      await c.store.claimNotifications(T0 + 100, 1000, 10);
      await c.store.settleNotification(at(3), { kind: 'dead', at: T0 + 200, error: 'HTTP 410' });
      await c.store.deletePushConfig(at(3).taskId, 'x');
      expect(await c.store.operator.redeliver(at(3), T0 + 300)).toBe(false);
    });
  });

  it('recentActivity gives the tasks touched since, when each started, and attempts per minute', async () => {
    const old = await create({ id: 'old', createdAt: T0 - HOUR });
    const waiting = await create({ id: 'waiting', createdAt: T0 - 2 * HOUR, expiresAt: T0 + 2 * HOUR });
    await write(old.id, { to: 'working', events: [{ kind: 'status', state: 'working' }], at: T0 + 1000 });
    await write(old.id, { from: ['working'], to: 'completed', events: [], at: T0 + 5000 });
    const fresh = await create({ id: 'fresh', createdAt: T0 + 2000 });
    await c.store.putPushConfig(hook(fresh.id));
    await write(fresh.id, { events: [note('one')], at: T0 + 3000 });
    await c.store.settleNotification(
      { taskId: fresh.id, configId: 'x', seq: 3 },
      { kind: 'delivered' },
      { attempt: 1, at: T0 + 60_000, durationMs: 5, status: 200 },
    );
    const activity = await c.store.operator.recentActivity(T0, 100);
    const byCreation = [...activity.tasks].sort((a, b) => a.createdAt - b.createdAt);
    expect(byCreation).toEqual([
      { state: 'submitted', createdAt: waiting.createdAt, updatedAt: waiting.updatedAt },
      { state: 'completed', createdAt: T0 - HOUR, updatedAt: T0 + 5000, startedAt: T0 + 1000 },
      { state: 'submitted', createdAt: T0 + 2000, updatedAt: T0 + 3000 },
    ]);
    expect(activity.attempts).toEqual([
      { minute: Math.floor((T0 + 60_000) / 60_000), outcome: 'delivered', count: 1 },
    ]);
    // Since T0 + 4000: the task finished after it, and the tasks queued (untouched) since before it.
    const later = (await c.store.operator.recentActivity(T0 + 4000, 100)).tasks.map((t) => t.createdAt);
    expect(later.sort((a, b) => a - b)).toEqual([waiting.createdAt, T0 - HOUR, T0 + 2000]);
  });
}
