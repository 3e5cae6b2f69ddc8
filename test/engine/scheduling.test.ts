import { describe, expect, it, vi } from 'vitest';
import { tenantOf } from '../../src/auth/principal.js';
import type { ClaimPolicy } from '../../src/engine/fair-share.js';
import type { TaskRecord } from '../../src/engine/task.js';
import { handleOf } from '../../src/faces/handle.js';
import { call, harnessEach, submit, thrown } from '../engine-harness.js';

const ALICE = 'api-key:acme/alice';
const CAROL = 'api-key:acme/carol';
const each = harnessEach();
const { h, t } = each;
/** How far the engine's clock runs ahead of the wall clock (to move past kept queue counts). */
let skew = 0;
let lastTick = 0;
function open(claimPolicy: ClaimPolicy = {}) {
  skew = 0;
  lastTick = 0;
  return each.open({
    skills: t.skills,
    // Never the same millisecond twice: a queue is in creation order to the millisecond (tasks of
    // one millisecond go by task id, which is random within it), and these tests create in bursts.
    clock: () => {
      lastTick = Math.max(Date.now() + skew, lastTick + 1);
      return lastTick;
    },
    engine: { tenantOf, claimPolicy, priorities: { max: 5, stepMs: 60_000 } },
  });
}

const queueOf = async (owner: string, id: string) => handleOf(await h.engine.record(owner, id));

describe('where a queued task stands', () => {
  it("shows its place in its owner's queue, and a poll interval that grows with it", async () => {
    open();
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) ids.push(await submit(h.engine, call('short', {}), ALICE));
    expect(await queueOf(ALICE, ids[0] as string)).toMatchObject({
      queue: { position: 1, ahead: 0, reason: 'no free slot' },
      pollIntervalMs: 1000,
    });
    const last = await queueOf(ALICE, ids[8] as string);
    expect(last.queue).toEqual({ position: 9, ahead: 8, reason: 'no free slot' });
    expect(last.pollIntervalMs).toBeGreaterThan(1000);
    // Another principal's tasks do not line up ahead of hers.
    const [carols] = [await submit(h.engine, call('short', {}), CAROL)];
    expect((await queueOf(CAROL, carols)).queue).toMatchObject({ position: 1, ahead: 0 });
    // The whole view (A2A, MCP, /v1/jobs) shows the same; a running task shows none.
    expect((await h.engine.get(ALICE, ids[8] as string)).record.queue?.ahead).toBe(8);
    h.startRunner({ concurrency: 2 });
    await t.jobStarted(ids[0] as string);
    expect((await queueOf(ALICE, ids[0] as string)).queue).toBeUndefined();
  });

  it("says a tenant's limit holds it, and its version moves as it advances", async () => {
    open({ tenantLimit: 1 });
    const first = await submit(h.engine, call('short', {}), ALICE);
    const second = await submit(h.engine, call('short', {}), CAROL);
    const before = await h.engine.version(CAROL, second);
    h.startRunner({ concurrency: 4 });
    await t.jobStarted(first);
    // Its standing was counted for the first version read, and is kept up to a second.
    skew += 1_000;
    expect((await queueOf(CAROL, second)).queue).toEqual({ position: 1, ahead: 0, reason: 'tenant limit' });
    expect(await h.engine.version(CAROL, second)).not.toBe(before);
  });

  it("says a skill's limit holds it", async () => {
    open({ skillLimits: { short: 1 } });
    const first = await submit(h.engine, call('short', {}), ALICE);
    const second = await submit(h.engine, call('short', {}), CAROL);
    h.startRunner({ concurrency: 4 });
    await t.jobStarted(first);
    // The counts its create made are kept up to a second: past it, where it stands now.
    skew += 1_000;
    expect((await queueOf(CAROL, second)).queue?.reason).toBe('skill limit');
  });
});

describe('a create and a list page show where a task stands', () => {
  it('the create answers with its standing, counted in its own write: a poll right after counts nothing again', async () => {
    open();
    const created = [];
    for (let i = 0; i < 3; i++)
      created.push((await h.engine.submit({ owner: ALICE, skill: 'short', input: {} })).view);
    expect(created.map((v) => v.record.queue)).toEqual([
      { position: 1, ahead: 0, reason: 'no free slot' },
      { position: 2, ahead: 1, reason: 'no free slot' },
      { position: 3, ahead: 2, reason: 'no free slot' },
    ]);
    const counted = vi.spyOn(h.store, 'queueCounts');
    const stamps = vi.spyOn(h.store, 'getTaskStamp');
    for (const view of created) {
      const { id } = view.record;
      expect(await queueOf(ALICE, id)).toEqual(handleOf(view.record));
      await h.engine.version(ALICE, id);
    }
    expect(counted).not.toHaveBeenCalled();
    expect(stamps.mock.calls.map(([, , queue]) => queue)).toEqual([undefined, undefined, undefined]);
  });

  it('a create behind a queue counted full (250 ahead) in the last second counts nothing, and shows that count', async () => {
    open();
    for (let i = 0; i <= 250; i++) await h.engine.submit({ owner: ALICE, skill: 'short', input: {} });
    const creates = vi.spyOn(h.store, 'createTask');
    const create = async (owner: string, priority?: number) =>
      (await h.engine.submit({ owner, skill: 'short', input: {}, priority })).view.record.queue;
    const capsAsked = () => creates.mock.calls.splice(0).map(([task]) => task.queueCap);
    expect(await create(ALICE)).toEqual({ position: 251, ahead: 250, reason: 'no free slot' });
    expect(capsAsked()).toEqual([undefined]);
    // Placed before the full count's task (a priority), another owner's, or a second later: counted.
    expect(await create(ALICE, 3)).toEqual({ position: 1, ahead: 0, reason: 'no free slot' });
    expect(await create(CAROL)).toEqual({ position: 1, ahead: 0, reason: 'no free slot' });
    expect(capsAsked()).toEqual([250, 250]);
    skew = lastTick - Date.now() + 1_000; // each create reads the clock, which runs ahead of the wall's
    expect(await create(ALICE)).toEqual({ position: 251, ahead: 250, reason: 'no free slot' });
    expect(capsAsked()).toEqual([250]);
  });

  it('each queued item of a list page shows what a read of it shows, counted once for the page', async () => {
    open();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await submit(h.engine, call('short', {}), ALICE));
    h.startRunner({ concurrency: 1 });
    await t.jobStarted(ids[0] as string);
    const counted = vi.spyOn(h.store, 'queueCounts');
    for (const historyLength of [0, undefined]) {
      const { views, page } = await h.engine.list(ALICE, {
        pageSize: 10,
        historyLength,
        withArtifacts: false,
      });
      const byId = new Map(views.map((v) => [v.record.id, v.record]));
      expect(byId.get(ids[0] as string)?.queue).toBeUndefined();
      expect(ids.slice(1).map((id) => byId.get(id)?.queue)).toEqual([
        { position: 1, ahead: 0, reason: 'no free slot' },
        { position: 2, ahead: 1, reason: 'no free slot' },
        { position: 3, ahead: 2, reason: 'no free slot' },
      ]);
      expect(page.records.map((r) => r.queue)).toEqual(views.map((v) => v.record.queue));
      for (const id of ids) expect(await queueOf(ALICE, id)).toEqual(handleOf(byId.get(id) as TaskRecord));
    }
    expect(counted).not.toHaveBeenCalled();
  });
});

describe('priorities', () => {
  it("run a task sooner among its owner's own, and show on the handle", async () => {
    open();
    const plain = await submit(h.engine, call('short', {}), ALICE);
    const { view } = await h.engine.submit({ owner: ALICE, skill: 'short', input: {}, priority: 3 });
    const urgent = view.record.id;
    expect(handleOf(view.record).priority).toBe(3);
    expect(view.record.queue?.position).toBe(1);
    // The plain task's standing, counted by its create, is kept up to a second: past it, behind.
    skew += 1_000;
    expect((await queueOf(ALICE, urgent)).queue?.position).toBe(1);
    expect((await queueOf(ALICE, plain)).queue?.position).toBe(2);
    const [claimed] = await h.store.claim('w', h.engine.now(), 60_000, 1);
    expect(claimed?.record.id).toBe(urgent);
  });

  it('are refused outside the bounds the server sets, saying what is allowed', async () => {
    open();
    for (const priority of [6, -6, 1.5, Number.NaN]) {
      const err = (await thrown(() =>
        h.engine.submit({ owner: ALICE, skill: 'short', input: {}, priority }),
      )) as { code?: string; message: string };
      expect(err.code).toBe('invalid-params');
      expect(err.message).toContain('priority must be an integer from -5 to 5');
    }
  });
});
