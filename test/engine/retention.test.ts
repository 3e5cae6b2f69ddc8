import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Sweeper } from '../../src/engine/retention.js';
import { call, harnessEach, logger, OWNER, submit, submitted, text, thrown } from '../engine-harness.js';
import { waitFor } from '../helpers.js';
import { newTask } from '../store/contract/context.js';

const T0 = 1_700_000_000_000;
const TTL = 1000;
const DAY = 86_400_000;

let now: number;
let sweeper: Sweeper;
const { h, t, open } = harnessEach();

beforeEach(() => {
  now = T0;
  const clock = () => now;
  // maxTtlMs caps every skill's ttl, so each task expires TTL after it was created.
  open({ skills: t.skills, defaultSkill: 'quick', clock, maxTtlMs: TTL });
  sweeper = new Sweeper({ store: h.store, intervalMs: 60_000, batch: 2, clock, logger });
});

afterEach(async () => {
  await sweeper.stop();
});

describe('Sweeper', () => {
  it("forgets the fair share's turns of those idle for a day, and only those", async () => {
    const queue = () => h.store.createTask(newTask({ createdAt: T0, expiresAt: T0 + 10 * DAY }));
    await queue();
    expect(await h.store.claim('w1', T0, 60_000, 1)).toHaveLength(1); // a turn for its tenant and owner
    now = T0 + DAY;
    await sweeper.sweep();
    expect(await h.store.forgetTurns(T0 + 1)).toBe(2); // not a day old yet: kept
    await queue();
    expect(await h.store.claim('w1', T0, 60_000, 1)).toHaveLength(1);
    now = T0 + DAY + 1;
    await sweeper.sweep();
    expect(await h.store.forgetTurns(T0 + 1)).toBe(0); // the sweep forgot them
  });

  it('deletes expired tasks with their events, in batches, and keeps the rest', async () => {
    const first = text('first');
    const old = [
      await submit(h.engine, first),
      await submit(h.engine, text('b')),
      await submit(h.engine, text('c')),
    ];
    now = T0 + 500;
    const young = await submit(h.engine, call('greet', { name: 'young' }));
    expect((await h.engine.get(OWNER, old[0] ?? '')).record.expiresAt).toBe(T0 + TTL);

    now = T0 + TTL;
    // Expired tasks are gone for callers before the sweeper runs.
    for (const id of old)
      expect(await thrown(() => h.engine.get(OWNER, id))).toMatchObject({ code: 'task-not-found' });
    const listed = await h.engine.list(OWNER, { pageSize: 10, withArtifacts: false });
    expect(listed.views.map((v) => v.record.id)).toEqual([young]);

    expect(await sweeper.sweep()).toBe(3);
    for (const id of old) expect(await h.store.readEvents(id, 0, 100)).toEqual([]);
    expect(await h.store.findByMessageId(OWNER, first.messageId)).toBeUndefined();
    expect((await h.engine.get(OWNER, young)).record.state).toBe('submitted');
    expect(await sweeper.sweep()).toBe(0);

    // The message that made a deleted task makes a new one.
    const again = await submitted(h.engine, first);
    expect(again).toMatchObject({ created: true });

    now = T0 + 10 * TTL;
    expect(await sweeper.sweep()).toBe(2);
  });

  it('joins a pass in flight, and stop() waits for it', async () => {
    await submit(h.engine, text('a'));
    now = T0 + TTL;
    const pass = sweeper.sweep();
    // A second call while a pass runs joins it.
    expect(sweeper.sweep()).toBe(pass);
    sweeper.start();
    await sweeper.stop();
    expect(await pass).toBe(1);
  });
});

describe('expired tasks and the runner', () => {
  it('does not run a task that expired while queued', async () => {
    const expired = await submit(h.engine, text('too late'));
    now = T0 + TTL;
    h.startRunner();
    // A task queued after it is claimed after it: once that one is done, the runner had its chance.
    const fresh = await submit(h.engine, text('in time'));
    await waitFor(
      async () => ((await h.store.getTask(fresh, now))?.state === 'completed' ? true : undefined),
      () => 'the fresh task to complete',
    );
    expect(t.runs('quick')).toBe(1);
    const log = await h.store.readEvents(expired, 0, 100);
    expect(log.map((e) => e.event.kind === 'status' && e.event.state)).toEqual([false, 'submitted']);
  });

  it('leaves no heartbeat behind when its task expired between claim and run', async () => {
    const id = await submit(h.engine, text('vanishing'));
    const claim = h.store.claim.bind(h.store);
    let claimed = false;
    h.store.claim = async (...args) => {
      const result = await claim(...args);
      if (result.length > 0) {
        claimed = true;
        now = T0 + TTL; // time passes between the claim and the job's first read
      }
      return result;
    };
    const renew = h.store.renewLease.bind(h.store);
    let renewals = 0;
    h.store.renewLease = (...args) => {
      renewals++;
      return renew(...args);
    };
    const runner = h.startRunner({ leaseMs: 150, pollMs: 10 });
    await waitFor(
      () => (claimed && runner.activeJobs === 0 ? true : undefined),
      () => 'the job to be claimed and to end',
    );
    await runner.stop(100);
    const before = renewals;
    await sleep(250); // five heartbeat periods: a heartbeat left running would renew in this time
    expect(renewals).toBe(before);
    expect(t.runs('quick')).toBe(0);
    expect(await h.store.getTask(id, now)).toBeUndefined();
  });
});
