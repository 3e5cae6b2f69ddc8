import { describe, expect, it } from 'vitest';
import type { ClaimPolicy } from '../../../src/engine/fair-share.js';
import type { NewTask } from '../../../src/engine/store-port.js';
import { type Contract, T0 } from './context.js';

const ALICE = { owner: 'api-key:acme/alice', tenant: 'api-key:acme' };
const CAROL = { owner: 'api-key:acme/carol', tenant: 'api-key:acme' };
const BOB = { owner: 'api-key:globex/bob', tenant: 'api-key:globex' };
const NOW = T0 + 10_000;

/** Fair claims (engine/fair-share.ts): who gets the next free slot, and the limits of running tasks. */
export function fairnessContract(c: Contract): void {
  /** Queues `n` tasks of `who`, a millisecond apart from `from`; their ids in queue order. */
  async function flood(who: Partial<NewTask>, n: number, from: number, more: Partial<NewTask> = {}) {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await c.create({ ...who, createdAt: from + i, ...more })).id);
    return ids;
  }
  const claim = async (slots: number, policy?: ClaimPolicy, now = NOW) =>
    (await c.store.claim('w1', now, 60_000, slots, policy)).map((x) => x.record.id);
  const finish = async (id: string) => {
    const row = await c.store.getTask(id, NOW);
    expect(row?.state).toBe('working');
    await c.store.write({
      taskId: id,
      from: ['working'],
      to: 'completed',
      releaseLease: true,
      events: [{ kind: 'status', state: 'completed' }],
      at: NOW,
    });
  };

  describe('fair claims', () => {
    it("a flood by one tenant does not delay another tenant's task beyond the next free slot", async () => {
      const flooded = await flood(ALICE, 40, T0);
      const [late] = await flood(BOB, 1, T0 + 1000);
      // Both tenants run nothing: the oldest head first, then the tenant with none running.
      expect(await claim(2)).toEqual([flooded[0], late]);
      expect(await claim(3)).toEqual(flooded.slice(1, 4));
    });

    it('gives a freed slot to the tenant with the fewest running tasks', async () => {
      const flooded = await flood(ALICE, 10, T0);
      expect(await claim(4)).toEqual(flooded.slice(0, 4));
      const bobs = await flood(BOB, 3, T0 + 500);
      // Acme runs 4, globex none: globex takes every slot until it runs as many.
      expect(await claim(2)).toEqual(bobs.slice(0, 2));
      await finish(flooded[0] as string);
      expect(await claim(1)).toEqual([bobs[2]]);
    });

    it('with one slot, tenants take turns: the one served last goes after the one that waits', async () => {
      const alices = await flood(ALICE, 5, T0);
      const bobs = await flood(BOB, 2, T0 + 500);
      const order: string[] = [];
      for (let i = 0; i < 4; i++) {
        const [id] = await claim(1, {}, NOW + i);
        order.push(id as string);
        await finish(id as string);
      }
      expect(order).toEqual([alices[0], bobs[0], alices[1], bobs[1]]);
    });

    it('forgets turns older than asked (tenant and owner), which then compete as never served', async () => {
      const [alice] = await flood(ALICE, 1, T0);
      await claim(1, {}, NOW);
      await finish(alice as string);
      expect(await c.store.forgetTurns(NOW)).toBe(0);
      // Alice's tenant and alice herself were served at NOW: two turns.
      expect(await c.store.forgetTurns(NOW + 1)).toBe(2);
      expect(await c.store.forgetTurns(NOW + 1)).toBe(0);
      // With no turn left, alice's next task and bob's compete by their tasks' age alone.
      const [later] = await flood(ALICE, 1, T0 + 1);
      const [bob] = await flood(BOB, 1, T0 + 2);
      expect(await claim(1, {}, NOW + 2)).toEqual([later]);
      expect(await claim(1, {}, NOW + 3)).toEqual([bob]);
    });

    it('shares a tenant among its principals by their running tasks', async () => {
      const alices = await flood(ALICE, 10, T0);
      const carols = await flood(CAROL, 2, T0 + 100);
      expect(await claim(3)).toEqual([alices[0], carols[0], alices[1]]);
      expect(await claim(1)).toEqual([carols[1]]);
    });

    it("orders one owner's queue by queueAt, and never lets it jump another owner's turn", async () => {
      const [plain] = await flood(ALICE, 1, T0);
      // Alice's later task says it counts as queued long before: it runs before her first one...
      const [urgent] = await flood(ALICE, 1, T0 + 50, { queueAt: T0 - 60_000, priority: 1 });
      // ...but not before Bob's task, created before it: a priority reorders its owner's queue only.
      const [bobs] = await flood(BOB, 1, T0 + 20);
      expect(await claim(1)).toEqual([bobs]);
      expect(await claim(2)).toEqual([urgent, plain]);
      expect((await c.store.getTask(urgent as string, NOW))?.priority).toBe(1);
    });

    it('reads each task with its tenant, and an owner without one is a tenant of its own', async () => {
      const [mine] = await flood(ALICE, 1, T0);
      const [solo] = await flood({ owner: 'anonymous' }, 1, T0);
      expect((await c.store.getTask(mine as string, NOW))?.tenant).toBe(ALICE.tenant);
      expect((await c.store.getTask(solo as string, NOW))?.tenant).toBe('anonymous');
    });
  });

  describe('retries', () => {
    it('a retry write queues the task again with its reason, not claimed before runAfter', async () => {
      const [id] = await flood(ALICE, 1, T0);
      const [claimed] = await c.store.claim('w1', NOW, 60_000, 1);
      for (const [i, reason] of ['first "try"', 'second'].entries()) {
        const written = await c.store.write({
          taskId: id as string,
          from: ['working'],
          to: 'submitted',
          leaseToken: i === 0 ? claimed?.leaseToken : undefined,
          releaseLease: true,
          retry: { runAfter: NOW + 1000 * (i + 1), reason },
          events: [{ kind: 'status', state: 'submitted' }],
          at: NOW,
        });
        expect(written?.record).toMatchObject({
          state: 'submitted',
          retries: i + 1,
          runAfter: NOW + 1000 * (i + 1),
        });
        expect(await claim(1, {}, NOW + 1000 * (i + 1) - 1)).toEqual([]);
        expect(await claim(1, {}, NOW + 1000 * (i + 1))).toEqual([id]);
      }
      expect((await c.store.getTask(id as string, NOW))?.retryReasons).toEqual(['first "try"', 'second']);
    });
  });

  describe('queueCounts', () => {
    it("counts the owner's queued tasks before a task (up to the cap) and the running ones", async () => {
      const alices = await flood(ALICE, 6, T0);
      const [bobs] = await flood(BOB, 1, T0, { skill: 'build' });
      expect(await claim(2)).toEqual([alices[0], bobs]);
      const last = await c.store.getTask(alices[5] as string, NOW);
      expect(await c.store.queueCounts(last as NonNullable<typeof last>, NOW, 100)).toEqual({
        ahead: 4,
        tenantRunning: 1,
        skillRunning: 1,
        running: 2,
      });
      expect((await c.store.queueCounts(last as NonNullable<typeof last>, NOW, 2)).ahead).toBe(2);
      const next = await c.store.getTask(alices[1] as string, NOW);
      expect((await c.store.queueCounts(next as NonNullable<typeof next>, NOW, 100)).ahead).toBe(0);
    });

    it("getTaskStamp counts the same in its own read, for the task's owner only, and only while queued", async () => {
      const alices = await flood(ALICE, 6, T0);
      const [bobs] = await flood(BOB, 1, T0, { skill: 'build' });
      expect(await claim(2)).toEqual([alices[0], bobs]);
      const last = alices[5] as string;
      const stamp = await c.store.getTaskStamp(last, NOW, { owner: ALICE.owner, cap: 100 });
      const queued = await c.store.getTask(last, NOW);
      expect(stamp?.queued).toEqual({
        tenant: ALICE.tenant,
        skill: 'echo',
        queueAt: queued?.queueAt,
        pollIntervalMs: 1000,
        runAfter: undefined,
        counts: { ahead: 4, tenantRunning: 1, skillRunning: 1, running: 2 },
      });
      const countsFor = async (id: string, owner?: string, cap = 100) =>
        (await c.store.getTaskStamp(id, NOW, owner === undefined ? undefined : { owner, cap }))?.queued
          ?.counts;
      expect((await countsFor(last, ALICE.owner, 2))?.ahead).toBe(2);
      // Nothing is counted for another caller (the engine refuses it as not found anyway), nor unasked.
      expect(await countsFor(last, BOB.owner)).toBeUndefined();
      expect(await countsFor(last)).toBeUndefined();
      expect((await c.store.getTaskStamp(last, NOW))?.queued?.skill).toBe('echo');
      // A running task has no standing at all.
      expect(
        (await c.store.getTaskStamp(alices[0] as string, NOW, { owner: ALICE.owner, cap: 100 }))?.queued,
      ).toBeUndefined();
    });

    // Ids are random within a millisecond: the claim and the count must still agree on one order.
    it('tasks of one millisecond: claimed in id order, and counted in the same order', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await c.create({ ...ALICE, createdAt: T0 })).id);
      const order = [...ids].sort();
      for (const [i, id] of order.entries()) {
        const task = await c.store.getTask(id, NOW);
        expect((await c.store.queueCounts(task as NonNullable<typeof task>, NOW, 100)).ahead).toBe(i);
      }
      expect(await claim(1)).toEqual([order[0]]);
      expect(await claim(1)).toEqual([order[1]]);
    });

    // PostgreSQL sends the stamps asked for at once as one statement: each must still get its own.
    it('stamps read at once each answer their own read: task, caller, cap and clock', async () => {
      const alices = await flood(ALICE, 6, T0);
      await claim(1);
      const [running, , , , , a5] = alices as [string, string, string, string, string, string];
      const reads = await Promise.all([
        c.store.getTaskStamp(a5, NOW, { owner: ALICE.owner, cap: 100 }),
        c.store.getTaskStamp(a5, NOW, { owner: ALICE.owner, cap: 2 }),
        c.store.getTaskStamp(a5, NOW, { owner: BOB.owner, cap: 100 }),
        c.store.getTaskStamp('no-such-task', NOW, { owner: ALICE.owner, cap: 100 }),
        c.store.getTaskStamp(running, NOW),
        c.store.getTaskStamp(a5, NOW + 86_400_000 * 365),
        c.store.getTaskStamp(a5, NOW),
      ]);
      expect(reads.map((s) => s?.queued?.counts?.ahead)).toEqual([
        4,
        2,
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      expect(reads.map((s) => s?.state)).toEqual([
        'submitted',
        'submitted',
        'submitted',
        undefined,
        'working',
        undefined,
        'submitted',
      ]);
      for (const i of [0, 1, 2, 6]) expect(reads[i]?.owner).toBe(ALICE.owner);
    });
  });

  describe('limits of running tasks', () => {
    it("a skill's limit holds; its owner's tasks of other skills run meanwhile", async () => {
      const builds = await flood(ALICE, 3, T0, { skill: 'build' });
      const [echo] = await flood(ALICE, 1, T0 + 100);
      const policy = { skillLimits: { build: 1 } };
      expect(await claim(10, policy)).toEqual([builds[0], echo]);
      expect(await claim(10, policy)).toEqual([]);
      await finish(builds[0] as string);
      expect(await claim(10, policy)).toEqual([builds[1]]);
    });

    it("a tenant's limit holds for all its principals; other tenants run meanwhile", async () => {
      const alices = await flood(ALICE, 3, T0);
      const carols = await flood(CAROL, 3, T0 + 10);
      const bobs = await flood(BOB, 2, T0 + 20);
      const policy = { tenantLimit: 2 };
      expect((await claim(10, policy)).sort()).toEqual([alices[0], carols[0], ...bobs].sort());
      expect(await claim(10, policy)).toEqual([]);
      await finish(carols[0] as string);
      // Acme may run one more: Carol, who now runs none, before Alice, who runs one.
      expect(await claim(10, policy)).toEqual([carols[1]]);
    });

    it('the global limit holds whatever the slots asked for', async () => {
      await flood(ALICE, 5, T0);
      await flood(BOB, 5, T0);
      expect(await claim(10, { globalLimit: 3 })).toHaveLength(3);
      expect(await claim(10, { globalLimit: 3 })).toEqual([]);
      expect(await claim(10, { globalLimit: 4 })).toHaveLength(1);
    });

    it('limits hold under many parallel claims', async () => {
      await flood(ALICE, 10, T0, { skill: 'build' });
      await flood(BOB, 10, T0, { skill: 'build' });
      await flood(CAROL, 10, T0);
      const policy = { skillLimits: { build: 3 }, tenantLimit: 4 };
      const batches = await Promise.all(
        Array.from({ length: 12 }, (_, i) => c.store.claim(`worker-${i % 3}`, NOW, 60_000, 2, policy)),
      );
      const claimed = batches.flat().map((x) => x.record);
      expect(claimed.filter((r) => r.skill === 'build')).toHaveLength(3);
      // Carol fills what acme's builds leave of its limit; globex runs only its builds.
      expect(claimed.filter((r) => r.tenant === ALICE.tenant)).toHaveLength(4);
      expect(claimed.filter((r) => r.tenant === BOB.tenant).length).toBeLessThanOrEqual(3);
      expect(new Set(claimed.map((r) => r.id)).size).toBe(claimed.length);
    });
  });
}
