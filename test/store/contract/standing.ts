import { describe, expect, it } from 'vitest';
import type { NewTask, QueueCounts } from '../../../src/engine/store-port.js';
import { type Contract, newTask, T0 } from './context.js';

const ALICE = { owner: 'api-key:acme/alice', tenant: 'api-key:acme' };
const BOB = { owner: 'api-key:globex/bob', tenant: 'api-key:globex' };
const NOW = T0 + 10_000;

/**
 * A queued task's standing counted with the read that shows it: a create's (NewTask.queueCap) and a
 * list page's (ListFilter.queueCap), each counting as queueCounts does for one task.
 */
export function standingContract(c: Contract): void {
  /** Queues `n` tasks of `who`, a millisecond apart from `from`; their ids in queue order. */
  async function flood(who: Partial<NewTask>, n: number, from: number, more: Partial<NewTask> = {}) {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await c.create({ ...who, createdAt: from + i, ...more })).id);
    return ids;
  }
  /** Alice: 6 queued, the first running; Bob: one of another skill, running. */
  async function scene() {
    const alices = await flood(ALICE, 6, T0);
    const [bobs] = await flood(BOB, 1, T0, { skill: 'build' });
    const claimed = await c.store.claim('w1', NOW, 60_000, 2);
    expect(claimed.map((x) => x.record.id)).toEqual([alices[0], bobs]);
    return alices;
  }
  const countsOf = async (id: string, cap = 100): Promise<QueueCounts> => {
    const task = await c.store.getTask(id, NOW);
    if (!task) throw new Error(`task ${id} not found`);
    return c.store.queueCounts(task, NOW, cap);
  };

  describe('standing counted with the read', () => {
    it("createTask with queueCap counts the new task's standing in its own transaction, as queueCounts would", async () => {
      await scene();
      const made = await c.store.createTask(newTask({ ...ALICE, createdAt: NOW, queueCap: 100 }));
      expect(made.created).toBe(true);
      expect(made.counts).toEqual({ ahead: 5, tenantRunning: 1, skillRunning: 1, running: 2 });
      expect(made.counts).toEqual(await countsOf(made.result.record.id));
      // Up to the cap; a task earlier in the queue (a priority) has fewer ahead; Bob's queue is his own.
      const capped = await c.store.createTask(newTask({ ...ALICE, createdAt: NOW, queueCap: 2 }));
      expect(capped.counts?.ahead).toBe(2);
      const early = await c.store.createTask(
        newTask({ ...ALICE, createdAt: NOW, queueAt: T0 - 1, queueCap: 100 }),
      );
      expect(early.counts?.ahead).toBe(0);
      const bobs = await c.store.createTask(
        newTask({ ...BOB, createdAt: NOW, skill: 'build', queueCap: 100 }),
      );
      expect(bobs.counts).toEqual({ ahead: 0, tenantRunning: 1, skillRunning: 1, running: 2 });
    });

    it('createTask counts nothing unasked, nor for a retry that made nothing', async () => {
      await scene();
      const task = newTask({ ...ALICE, createdAt: NOW });
      const plain = await c.store.createTask(task);
      expect(plain.created).toBe(true);
      expect(plain.counts).toBeUndefined();
      const again = await c.store.createTask({ ...task, id: 'another-id', queueCap: 100 });
      expect(again).toMatchObject({ created: false, result: { record: { id: task.id } } });
      expect(again.counts).toBeUndefined();
      // With webhooks given (PostgreSQL then writes in a transaction of several statements) too.
      const hooked = await c.store.createTask(
        newTask({
          ...ALICE,
          id: 'hooked',
          createdAt: NOW,
          queueCap: 100,
          pushConfigs: [
            {
              taskId: 'hooked',
              id: 'cfg',
              url: 'https://example.com/hook',
              allEvents: false,
              format: 'v1',
              createdAt: NOW,
            },
          ],
        }),
      );
      expect(hooked.counts?.ahead).toBe(6);
    });

    it('listTasks with queueCap counts each queued task of the page once for the page, as queueCounts counts it', async () => {
      const alices = await scene();
      const base = { owner: ALICE.owner, now: NOW, pageSize: 10 };
      const page = await c.store.listTasks({ ...base, queueCap: 100 });
      expect(page.records).toHaveLength(6);
      // The running task has no standing; every queued one has its own.
      expect([...(page.queued?.keys() ?? [])].sort()).toEqual(alices.slice(1).sort());
      for (const id of alices.slice(1)) expect(page.queued?.get(id), id).toEqual(await countsOf(id));
      expect(page.queued?.get(alices[5] as string)).toEqual({
        ahead: 4,
        tenantRunning: 1,
        skillRunning: 1,
        running: 2,
      });
      // Up to the cap, the tasks past it counted as the cap.
      const capped = await c.store.listTasks({ ...base, queueCap: 2 });
      expect(alices.slice(1).map((id) => capped.queued?.get(id)?.ahead)).toEqual([0, 1, 2, 2, 2]);
      // A later page counts its own tasks where they stand in the whole queue.
      const first = await c.store.listTasks({ ...base, pageSize: 2, queueCap: 100 });
      const second = await c.store.listTasks({
        ...base,
        pageSize: 2,
        pageToken: first.nextPageToken,
        queueCap: 100,
      });
      for (const r of second.records) expect(second.queued?.get(r.id)).toEqual(await countsOf(r.id));
      expect(second.queued?.size).toBe(2);
    });

    it('listTasks counts nothing unasked, nor on a page with none queued', async () => {
      await scene();
      const base = { owner: ALICE.owner, now: NOW, pageSize: 10 };
      expect((await c.store.listTasks(base)).queued).toBeUndefined();
      const working = await c.store.listTasks({ ...base, state: 'working', queueCap: 100 });
      expect(working.records).toHaveLength(1);
      expect(working.queued?.size ?? 0).toBe(0);
      expect((await c.store.listTasks({ ...base, owner: 'nobody', queueCap: 100 })).queued?.size ?? 0).toBe(
        0,
      );
    });
  });
}
