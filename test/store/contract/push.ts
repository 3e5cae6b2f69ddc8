import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/engine/events.js';
import type { NotificationKey, PendingNotification, PushConfig } from '../../../src/engine/push.js';
import type { TaskState } from '../../../src/engine/task.js';
import { type Contract, newTask, note, T0 } from './context.js';

const LEASE = 1000;

const hook = (taskId: string, id: string, overrides: Partial<PushConfig> = {}): PushConfig => ({
  taskId,
  id,
  url: `https://hooks.example/${id}`,
  allEvents: false,
  format: 'a2a/1.0',
  createdAt: T0 + 1,
  ...overrides,
});

const status = (state: TaskState): TaskEvent => ({ kind: 'status', state });
const progress: TaskEvent = { kind: 'progress', progress: { percent: 50 } };
const artifact: TaskEvent = {
  kind: 'artifact',
  artifact: { artifactId: 'a-1', parts: [{ text: 'out' }] },
  append: false,
  lastChunk: true,
};

const key = (n: NotificationKey): NotificationKey => ({ taskId: n.taskId, configId: n.configId, seq: n.seq });
const byKey = (a: NotificationKey, b: NotificationKey) =>
  a.taskId.localeCompare(b.taskId) || a.configId.localeCompare(b.configId) || a.seq - b.seq;

/** Webhooks, the notifications task writes queue for them, and their delivery leases. */
export function pushContract(c: Contract): void {
  const { create, write } = c;
  const keys = async (now: number, limit = 100) =>
    (await c.store.claimNotifications(now, LEASE, limit)).map(key).sort(byKey);
  const delivered = (n: NotificationKey) => c.store.settleNotification(n, { kind: 'delivered' });
  /** Every notification queued and due at `now`, delivering each as it comes: the whole queue, in order. */
  async function drain(now = T0 + 10_000): Promise<PendingNotification[]> {
    const all: PendingNotification[] = [];
    for (let rounds = 0; rounds < 100; rounds++) {
      const batch = await c.store.claimNotifications(now, LEASE, 100);
      if (batch.length === 0) return all.sort(byKey);
      for (const n of batch) await delivered(n);
      all.push(...batch);
    }
    throw new Error('claimNotifications never ran dry');
  }
  const drainKeys = async (now?: number) => (await drain(now)).map(key);
  const pushCount = async (taskId: string) => (await c.store.getTask(taskId, T0))?.pushConfigs;

  describe('push configs', () => {
    it('round-trips every field of a config through put, get and list', async () => {
      const task = await create();
      const full = hook(task.id, 'full', {
        url: 'https://hooks.example/full?x=1',
        token: 'tok-1',
        authentication: { scheme: 'Bearer', credentials: 's3cret' },
        allEvents: true,
        format: 'a2a/0.3',
        createdAt: T0 + 5,
      });
      const bare = hook(task.id, 'bare', { createdAt: T0 + 6 });
      const schemeOnly = hook(task.id, 'scheme-only', {
        authentication: { scheme: 'Basic' },
        createdAt: T0 + 7,
      });
      for (const config of [full, bare, schemeOnly]) await c.store.putPushConfig(config);
      expect(await c.store.getPushConfig(task.id, 'full')).toEqual(full);
      const gotBare = await c.store.getPushConfig(task.id, 'bare');
      expect(gotBare).toEqual(bare);
      expect(gotBare?.token).toBeUndefined();
      expect(gotBare?.authentication).toBeUndefined();
      expect(gotBare?.allEvents).toBe(false);
      const gotSchemeOnly = await c.store.getPushConfig(task.id, 'scheme-only');
      expect(gotSchemeOnly?.authentication).toEqual({ scheme: 'Basic' });
      expect(gotSchemeOnly?.authentication?.credentials).toBeUndefined();
      expect(await c.store.listPushConfigs(task.id)).toEqual([full, bare, schemeOnly]);
    });

    it('put with the same (taskId, id) replaces the config', async () => {
      const task = await create();
      await c.store.putPushConfig(
        hook(task.id, 'x', { token: 'old', authentication: { scheme: 'Bearer', credentials: 'old' } }),
      );
      const replacement = hook(task.id, 'x', {
        url: 'https://other.example/new',
        allEvents: true,
        format: 'a2a/0.3',
        createdAt: T0 + 9,
      });
      await c.store.putPushConfig(replacement);
      expect(await c.store.getPushConfig(task.id, 'x')).toEqual(replacement);
      expect(await c.store.listPushConfigs(task.id)).toEqual([replacement]);
    });

    it('lists only the configs of the task, ordered by createdAt then id', async () => {
      const task = await create();
      const other = await create();
      await c.store.putPushConfig(hook(task.id, 'a', { createdAt: T0 + 3 }));
      await c.store.putPushConfig(hook(task.id, 'c', { createdAt: T0 + 1 }));
      await c.store.putPushConfig(hook(other.id, 'z', { createdAt: T0 }));
      await c.store.putPushConfig(hook(task.id, 'b', { createdAt: T0 + 1 }));
      await c.store.putPushConfig(hook(task.id, 'd', { createdAt: T0 + 2 }));
      expect((await c.store.listPushConfigs(task.id)).map((x) => x.id)).toEqual(['b', 'c', 'd', 'a']);
      expect(await c.store.listPushConfigs(other.id)).toEqual([hook(other.id, 'z', { createdAt: T0 })]);
      expect(await c.store.getPushConfig(task.id, 'z')).toBeUndefined();
    });

    it('with maxPerTask, stores no new webhook past it, however many puts race; a replacement still goes in', async () => {
      const task = await create();
      const puts = await Promise.all(
        ['e', 'f', 'g', 'h'].map((id) => c.store.putPushConfig(hook(task.id, id), 2)),
      );
      expect(puts.filter(Boolean)).toHaveLength(2);
      expect(await pushCount(task.id)).toBe(2);
      const kept = (await c.store.listPushConfigs(task.id)).map((x) => x.id);
      expect(kept).toHaveLength(2);
      expect(
        await c.store.putPushConfig(hook(task.id, kept[0] as string, { url: 'https://hooks.example/v2' }), 2),
      ).toBe(true);
      expect(await c.store.putPushConfig(hook(task.id, 'z'), 2)).toBe(false);
      expect(await pushCount(task.id)).toBe(2);
    });

    it("counts the webhooks of an owner's unfinished tasks, all together: not ended, expired or others' tasks", async () => {
      const queued = await create();
      const waiting = await create();
      const ended = await create();
      const short = await create({ expiresAt: T0 + 100 });
      const bobs = await create({ owner: 'bob' });
      for (const id of ['a', 'b']) await c.store.putPushConfig(hook(queued.id, id));
      for (const task of [waiting, ended, short, bobs]) await c.store.putPushConfig(hook(task.id, 'x'));
      await c.store.putPushConfig(hook(queued.id, 'a')); // a replacement adds none
      await write(waiting.id, {
        from: ['submitted'],
        to: 'input-required',
        events: [status('input-required')],
      });
      await write(ended.id, { from: ['submitted'], to: 'completed', events: [status('completed')] });
      expect(await c.store.countActivePushConfigs('alice', T0)).toBe(4);
      expect(await c.store.countActivePushConfigs('alice', T0 + 200)).toBe(3);
      await c.store.deletePushConfig(queued.id, 'b');
      expect(await c.store.countActivePushConfigs('alice', T0 + 200)).toBe(2);
      expect(await c.store.countActivePushConfigs('bob', T0)).toBe(1);
      expect(await c.store.countActivePushConfigs('nobody', T0)).toBe(0);
    });

    it('gets undefined and lists nothing for an unknown task or config', async () => {
      const task = await create();
      await c.store.putPushConfig(hook(task.id, 'x'));
      expect(await c.store.getPushConfig(task.id, 'nope')).toBeUndefined();
      expect(await c.store.getPushConfig('no-task', 'x')).toBeUndefined();
      expect(await c.store.listPushConfigs('no-task')).toEqual([]);
      expect(await c.store.listPushConfigs((await create()).id)).toEqual([]);
    });

    it('deletes a config once: true, then false; the others stay', async () => {
      const task = await create();
      await c.store.putPushConfig(hook(task.id, 'x'));
      await c.store.putPushConfig(hook(task.id, 'y'));
      expect(await c.store.deletePushConfig(task.id, 'x')).toBe(true);
      expect(await c.store.getPushConfig(task.id, 'x')).toBeUndefined();
      expect(await c.store.deletePushConfig(task.id, 'x')).toBe(false);
      expect(await c.store.deletePushConfig(task.id, 'nope')).toBe(false);
      expect(await c.store.deletePushConfig('no-task', 'y')).toBe(false);
      expect(await c.store.listPushConfigs(task.id)).toEqual([hook(task.id, 'y')]);
    });

    it('counts the configs of the task in TaskRecord.pushConfigs', async () => {
      const task = await create();
      const other = await create();
      expect(task.pushConfigs).toBe(0);
      await c.store.putPushConfig(hook(task.id, 'x'));
      expect(await pushCount(task.id)).toBe(1);
      await c.store.putPushConfig(hook(task.id, 'y'));
      expect(await pushCount(task.id)).toBe(2);
      await c.store.putPushConfig(hook(task.id, 'x', { url: 'https://hooks.example/again' }));
      expect(await pushCount(task.id)).toBe(2);
      await c.store.deletePushConfig(task.id, 'x');
      expect(await pushCount(task.id)).toBe(1);
      await c.store.deletePushConfig(task.id, 'x');
      expect(await pushCount(task.id)).toBe(1);
      await c.store.deletePushConfig(task.id, 'y');
      expect(await pushCount(task.id)).toBe(0);
      expect(await pushCount(other.id)).toBe(0);
    });
  });

  describe('queueing notifications', () => {
    it.each(['input-required', 'auth-required', 'completed', 'failed', 'canceled', 'rejected'] as const)(
      'queues one notification per config for a status event into %s',
      async (state) => {
        const task = await create();
        const x = hook(task.id, 'x');
        await c.store.putPushConfig(x);
        await c.store.putPushConfig(hook(task.id, 'y'));
        await write(task.id, { to: state, events: [status(state)], at: T0 + 10 });
        const queued = await drain();
        expect(queued.map(key)).toEqual([
          { taskId: task.id, configId: 'x', seq: 3 },
          { taskId: task.id, configId: 'y', seq: 3 },
        ]);
        expect(queued[0]).toEqual({
          taskId: task.id,
          configId: 'x',
          seq: 3,
          createdAt: T0 + 10,
          attempts: 1,
          config: x,
        });
      },
    );

    it('queues nothing for working, progress, artifact and message events of a default config', async () => {
      const task = await create();
      await c.store.putPushConfig(hook(task.id, 'x'));
      await write(task.id, { to: 'working', events: [status('working')] });
      await write(task.id, { from: ['working'], events: [progress, artifact, note('hi')] });
      expect(await drain()).toEqual([]);
      // The config does hear of what it asks for: the silence above is not a broken queue.
      await write(task.id, { from: ['working'], to: 'completed', events: [status('completed')] });
      expect(await drainKeys()).toEqual([{ taskId: task.id, configId: 'x', seq: 7 }]);
    });

    it('queues one notification per event for an allEvents config', async () => {
      const task = await create();
      await c.store.putPushConfig(hook(task.id, 'all', { allEvents: true }));
      await write(task.id, { to: 'working', events: [status('working')] });
      await write(task.id, { from: ['working'], events: [progress, artifact, note('hi')], at: T0 + 11 });
      await write(task.id, {
        from: ['working'],
        to: 'completed',
        events: [status('completed')],
        at: T0 + 12,
      });
      const queued = await drain();
      expect(queued.map((n) => [n.seq, n.createdAt])).toEqual([
        [3, T0 + 10],
        [4, T0 + 11],
        [5, T0 + 11],
        [6, T0 + 11],
        [7, T0 + 12],
      ]);
      expect(queued.every((n) => n.configId === 'all' && n.attempts === 1)).toBe(true);
    });

    it('queues nothing for events written before the config existed', async () => {
      const task = await create();
      await write(task.id, { events: [note('before')], at: T0 + 5 });
      await c.store.putPushConfig(hook(task.id, 'all', { allEvents: true, createdAt: T0 + 6 }));
      await write(task.id, { events: [note('after')], at: T0 + 7 });
      expect(await drainKeys()).toEqual([{ taskId: task.id, configId: 'all', seq: 4 }]);
    });

    it('queues nothing for a task without configs, even when another task has some', async () => {
      const bare = await create();
      const hooked = await create();
      await c.store.putPushConfig(hook(hooked.id, 'all', { allEvents: true }));
      await write(bare.id, { to: 'completed', events: [status('completed')] });
      expect(await drain()).toEqual([]);
      await write(hooked.id, { to: 'completed', events: [status('completed')] });
      expect(await drainKeys()).toEqual([{ taskId: hooked.id, configId: 'all', seq: 3 }]);
    });

    it('createTask stores its pushConfigs and queues the allEvents ones for its own events', async () => {
      const task = newTask();
      const all = hook(task.id, 'all', { allEvents: true, createdAt: T0 });
      const terse = hook(task.id, 'terse', { createdAt: T0 });
      const { result } = await c.store.createTask({ ...task, pushConfigs: [all, terse] });
      expect(result.record.pushConfigs).toBe(2);
      expect(await pushCount(task.id)).toBe(2);
      expect(await c.store.getPushConfig(task.id, 'all')).toEqual(all);
      expect(await c.store.getPushConfig(task.id, 'terse')).toEqual(terse);
      expect(await c.store.listPushConfigs(task.id)).toEqual([all, terse]);
      const queued = await drain();
      expect(queued.map((n) => [n.configId, n.seq, n.createdAt])).toEqual([
        ['all', 1, T0],
        ['all', 2, T0],
      ]);
    });

    it("a claim's working event queues for allEvents configs only", async () => {
      const task = newTask();
      await c.store.createTask({
        ...task,
        pushConfigs: [hook(task.id, 'all', { allEvents: true }), hook(task.id, 'terse')],
      });
      await drain(T0);
      const [claimed] = await c.store.claim('w1', T0 + 20, 60_000, 1);
      expect(claimed?.events.map((e) => e.seq)).toEqual([3]);
      const queued = await drain();
      expect(queued.map((n) => [n.configId, n.seq, n.createdAt])).toEqual([['all', 3, T0 + 20]]);
    });
  });

  describe('claimNotifications', () => {
    /** A task with one allEvents config `x` and notifications for seq 3 (at T0 + 10) and 4 (at T0 + 11). */
    async function twoQueued(): Promise<string> {
      const task = await create();
      await c.store.putPushConfig(hook(task.id, 'x', { allEvents: true }));
      await write(task.id, { events: [note('one')], at: T0 + 10 });
      await write(task.id, { events: [note('two')], at: T0 + 11 });
      return task.id;
    }
    const at = (taskId: string, seq: number): NotificationKey => ({ taskId, configId: 'x', seq });

    it('returns only notifications whose next attempt has come, with the config and attempts 1', async () => {
      const task = await create();
      const x = hook(task.id, 'x', { token: 't', authentication: { scheme: 'Bearer', credentials: 'c' } });
      await c.store.putPushConfig(x);
      await write(task.id, { to: 'failed', events: [status('failed')], at: T0 + 10 });
      expect(await c.store.claimNotifications(T0 + 9, LEASE, 10)).toEqual([]);
      expect(await c.store.claimNotifications(T0 + 10, LEASE, 10)).toEqual([
        { taskId: task.id, configId: 'x', seq: 3, createdAt: T0 + 10, attempts: 1, config: x },
      ]);
    });

    it('returns only the oldest undelivered notification of each config, in seq order', async () => {
      const id = await twoQueued();
      expect(await keys(T0 + 100)).toEqual([at(id, 3)]);
      // Seq 4 is due but waits behind seq 3, however often the dispatcher asks.
      expect(await keys(T0 + 100 + LEASE)).toEqual([at(id, 3)]);
      await delivered(at(id, 3));
      const [next, ...rest] = await c.store.claimNotifications(T0 + 100 + LEASE, LEASE, 10);
      expect(rest).toEqual([]);
      expect(next).toMatchObject({ ...at(id, 4), createdAt: T0 + 11, attempts: 1 });
      await delivered(at(id, 4));
      expect(await keys(T0 + 10_000)).toEqual([]);
    });

    it('keeps configs and tasks independent of each other', async () => {
      const a = await create();
      const b = await create();
      for (const [taskId, id] of [
        [a.id, 'x'],
        [a.id, 'y'],
        [b.id, 'x'],
      ] as const) {
        await c.store.putPushConfig(hook(taskId, id, { allEvents: true }));
      }
      await write(a.id, { events: [note('1'), note('2')] });
      await write(b.id, { events: [note('1'), note('2')] });
      const heads = [
        { taskId: a.id, configId: 'x', seq: 3 },
        { taskId: a.id, configId: 'y', seq: 3 },
        { taskId: b.id, configId: 'x', seq: 3 },
      ].sort(byKey);
      expect(await keys(T0 + 100)).toEqual(heads);
      // Delivering one config's head moves that config on only.
      await delivered({ taskId: a.id, configId: 'y', seq: 3 });
      expect(await keys(T0 + 100)).toEqual([{ taskId: a.id, configId: 'y', seq: 4 }]);
    });

    it('leases what it returns until now + leaseMs, then returns it again with attempts + 1', async () => {
      const id = await twoQueued();
      const [first] = await c.store.claimNotifications(T0 + 100, LEASE, 10);
      expect(first).toMatchObject({ ...at(id, 3), attempts: 1 });
      expect(await c.store.claimNotifications(T0 + 100, LEASE, 10)).toEqual([]);
      expect(await c.store.claimNotifications(T0 + 99 + LEASE, LEASE, 10)).toEqual([]);
      const [second] = await c.store.claimNotifications(T0 + 100 + LEASE, LEASE, 10);
      expect(second).toMatchObject({ ...at(id, 3), attempts: 2 });
      expect(await c.store.claimNotifications(T0 + 99 + 2 * LEASE, LEASE, 10)).toEqual([]);
      const [third] = await c.store.claimNotifications(T0 + 100 + 2 * LEASE, LEASE, 10);
      expect(third).toMatchObject({ ...at(id, 3), attempts: 3 });
    });

    it('honors limit and hands each notification out once', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const task = await create();
        ids.push(task.id);
        await c.store.putPushConfig(hook(task.id, 'x'));
        await write(task.id, { to: 'completed', events: [status('completed')], at: T0 + 10 + i });
      }
      const first = await keys(T0 + 100, 2);
      const second = await keys(T0 + 100, 2);
      const third = await keys(T0 + 100, 10);
      expect([first.length, second.length, third.length]).toEqual([2, 2, 1]);
      const all = [...first, ...second, ...third].map((n) => n.taskId).sort();
      expect(all).toEqual([...ids].sort());
      expect(await keys(T0 + 100, 10)).toEqual([]);
    });
  });

  describe('settleNotification', () => {
    async function twoQueued(): Promise<string> {
      const task = await create();
      await c.store.putPushConfig(hook(task.id, 'x', { allEvents: true }));
      await write(task.id, { events: [note('one'), note('two')], at: T0 + 10 });
      return task.id;
    }
    const at = (taskId: string, seq: number): NotificationKey => ({ taskId, configId: 'x', seq });

    it('delivered removes the notification for good and lets the next one out', async () => {
      const id = await twoQueued();
      await c.store.claimNotifications(T0 + 100, LEASE, 10);
      await delivered(at(id, 3));
      // Long after the lease, seq 3 is never handed out again.
      expect(await keys(T0 + 100 + 10 * LEASE)).toEqual([at(id, 4)]);
      await delivered(at(id, 4));
      expect(await keys(T0 + 100 + 100 * LEASE)).toEqual([]);
    });

    it('retry makes it due again from `at` only, releasing its lease, and holds back the next one', async () => {
      const id = await twoQueued();
      await c.store.claimNotifications(T0 + 100, 60_000, 10);
      await c.store.settleNotification(at(id, 3), { kind: 'retry', at: T0 + 500, error: 'HTTP 503' });
      expect(await keys(T0 + 499)).toEqual([]);
      // Due at `at` although the claim's lease ran until T0 + 60_100.
      const [again] = await c.store.claimNotifications(T0 + 500, LEASE, 10);
      expect(again).toMatchObject({ ...at(id, 3), attempts: 2 });
      // A retry later than the lease: the lease's end does not make it due.
      await c.store.settleNotification(at(id, 3), {
        kind: 'retry',
        at: T0 + 500 + 5 * LEASE,
        error: 'timeout',
      });
      expect(await keys(T0 + 500 + LEASE)).toEqual([]);
      expect(await keys(T0 + 499 + 5 * LEASE)).toEqual([]);
      const [third] = await c.store.claimNotifications(T0 + 500 + 5 * LEASE, LEASE, 10);
      expect(third).toMatchObject({ ...at(id, 3), attempts: 3 });
    });

    it('dead makes it never due again and no longer holds back the ones after it', async () => {
      const id = await twoQueued();
      await c.store.claimNotifications(T0 + 100, LEASE, 10);
      await c.store.settleNotification(at(id, 3), { kind: 'dead', at: T0 + 200, error: 'HTTP 410' });
      const [next, ...rest] = await c.store.claimNotifications(T0 + 200, LEASE, 10);
      expect(rest).toEqual([]);
      expect(next).toMatchObject({ ...at(id, 4), attempts: 1 });
      await delivered(at(id, 4));
      expect(await keys(T0 + 200 + 100 * LEASE)).toEqual([]);
    });
  });

  describe('deleting configs and tasks', () => {
    it('deleting a config removes its undelivered notifications and leaves the others alone', async () => {
      const task = await create();
      await c.store.putPushConfig(hook(task.id, 'x', { allEvents: true }));
      await c.store.putPushConfig(hook(task.id, 'y', { allEvents: true }));
      await write(task.id, { events: [note('one'), note('two')], at: T0 + 10 });
      // x's head is leased (in flight), its second one waits behind it.
      expect(await keys(T0 + 100)).toEqual([
        { taskId: task.id, configId: 'x', seq: 3 },
        { taskId: task.id, configId: 'y', seq: 3 },
      ]);
      expect(await c.store.deletePushConfig(task.id, 'x')).toBe(true);
      // A config put again under the same id starts afresh: the old notifications are gone, not hidden.
      await c.store.putPushConfig(hook(task.id, 'x'));
      const left = await drainKeys(T0 + 100 + LEASE);
      expect(left).toEqual([
        { taskId: task.id, configId: 'y', seq: 3 },
        { taskId: task.id, configId: 'y', seq: 4 },
      ]);
    });

    it('deleteExpired removes the configs and notifications of the tasks it deletes', async () => {
      const doomed = await create({ expiresAt: T0 + 100 });
      const kept = await create({ expiresAt: T0 + 10_000 });
      for (const task of [doomed, kept]) {
        await c.store.putPushConfig(hook(task.id, 'x', { allEvents: true }));
        await write(task.id, { events: [note('one'), note('two')], at: T0 + 10 });
      }
      expect(await c.store.deleteExpired(T0 + 100, 10)).toBe(1);
      expect(await c.store.getPushConfig(doomed.id, 'x')).toBeUndefined();
      expect(await c.store.listPushConfigs(doomed.id)).toEqual([]);
      expect(await c.store.listPushConfigs(kept.id)).toEqual([hook(kept.id, 'x', { allEvents: true })]);
      expect(await drainKeys(T0 + 100)).toEqual([
        { taskId: kept.id, configId: 'x', seq: 3 },
        { taskId: kept.id, configId: 'x', seq: 4 },
      ]);
      // A new task under the same id, with a config under the same id, inherits nothing.
      await c.store.createTask(newTask({ id: doomed.id, createdAt: T0 + 200, expiresAt: T0 + 10_000 }));
      expect(await pushCount(doomed.id)).toBe(0);
      expect(await c.store.listPushConfigs(doomed.id)).toEqual([]);
      await c.store.putPushConfig(hook(doomed.id, 'x', { createdAt: T0 + 200 }));
      expect(await drain(T0 + 10_000)).toEqual([]);
    });
  });
}
