import { describe, expect, it } from 'vitest';
import { call, harnessEach, OWNER, submit, textOf, waitForState } from '../engine-harness.js';
import { waitFor } from '../helpers.js';

const { h, t } = harnessEach((t) => ({ skills: t.skills, defaultSkill: 'quick' }));

describe('lease takeover', () => {
  /** A runner that claimed the task and died: it holds a short lease that it never renews. */
  async function claimAndDie(id: string) {
    const [dead, ...more] = await h.store.claim('dead-worker', h.engine.now(), 150, 10);
    expect(more).toEqual([]);
    expect(dead?.record.id).toBe(id);
    if (!dead) throw new Error('claim failed');
    return dead;
  }

  it('re-runs a task of an onInterrupt: rerun skill once the dead runner’s lease expired', async () => {
    const id = await submit(h.engine, call('quick', { text: 'again' }));
    const dead = await claimAndDie(id);
    h.startRunner({ pollMs: 10 });
    const done = await waitForState(h.engine, id, 'completed');
    expect(done.attempts).toBe(2);
    expect(textOf(done.statusMessage)).toBe('done: again');
    expect(t.runs('quick')).toBe(1);
    const { history } = await h.engine.get(OWNER, id);
    expect(history.map(textOf)).toContain('Interrupted by a restart; running again');
    // The dead runner, were it to wake up, can change nothing.
    const late = await h.store.write({
      taskId: id,
      from: ['working', 'completed'],
      to: 'failed',
      leaseToken: dead.leaseToken,
      events: [{ kind: 'status', state: 'failed' }],
      at: h.engine.now(),
    });
    expect(late).toBeUndefined();
  });

  it('fails a task of an onInterrupt: fail skill with a clear status message, without running it', async () => {
    const id = await submit(h.engine, call('fragile', {}));
    await claimAndDie(id);
    h.startRunner({ pollMs: 10 });
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toMatch(/Interrupted by a restart/);
    expect(textOf(failed.statusMessage)).toMatch(/not re-run/);
    expect(t.runs('fragile')).toBe(0);
  });

  it('fails a task whose runner died more than maxInterruptions times, without running it again', async () => {
    const id = await submit(h.engine, call('quick', {}));
    const t0 = h.engine.now();
    await h.store.claim('dies-1', t0, 150, 10); // first run: its process dies
    const [second] = await h.store.claim('dies-2', t0 + 200, 150, 10); // taken over, dies too
    expect(second?.record.interruptions).toBe(1);
    h.startRunner({ pollMs: 10, maxInterruptions: 1 });
    const failed = await waitForState(h.engine, id, 'failed');
    expect(failed.interruptions).toBe(2);
    expect(textOf(failed.statusMessage)).toBe(
      'Interrupted 2 times (its runner died each time); not run again',
    );
    expect(t.runs('quick')).toBe(0);
  });

  it('keeps a task from two runners at once, renewing leases while jobs outlast them', async () => {
    // Jobs run longer than the lease, so only heartbeats keep the other runner off them.
    // The lease is wide enough that a busy machine's event-loop stalls do not look like a dead runner.
    const options = { concurrency: 3, leaseMs: 1200, pollMs: 10 };
    const runners = [h.startRunner(options), h.startRunner(options)];
    const ids = await Promise.all(
      Array.from({ length: 10 }, () => submit(h.engine, call('counted', { ms: 1500 }))),
    );
    for (const id of ids) {
      const done = await waitForState(h.engine, id, 'completed', 15_000);
      expect(done.attempts).toBe(1);
      expect(t.maxActive.get(id)).toBe(1);
    }
    expect(t.runs('counted')).toBe(10);
    await waitFor(
      () => (runners.every((r) => r.activeJobs === 0) ? true : undefined),
      () => 'the runners to go idle',
    );
  });

  it('aborts a job whose lease is lost with reason lease-lost, and writes nothing after', async () => {
    const runner = h.startRunner({ leaseMs: 300 });
    const id = await submit(h.engine, call('waits', {}));
    await t.jobStarted(id);
    // Another party ends the task under the job (as a forced cancel or a takeover would).
    const ended = await h.store.write({
      taskId: id,
      from: ['working'],
      to: 'failed',
      events: [{ kind: 'status', state: 'failed' }],
      at: h.engine.now(),
    });
    expect(ended?.record.state).toBe('failed');
    await waitFor(
      () => t.reasons.get(id),
      () => 'the job to see its signal abort',
    );
    expect(t.reasons.get(id)).toBe('lease-lost');
    await waitFor(
      () => (runner.activeJobs === 0 ? true : undefined),
      () => 'the job to end',
    );
    const log = await h.store.readEvents(id, 0, 100);
    expect(log.at(-1)?.seq).toBe(ended?.record.lastSeq);
    expect((await h.engine.get(OWNER, id)).record.state).toBe('failed');
  });

  it('respects its concurrency', async () => {
    const runner = h.startRunner({ concurrency: 2 });
    const ids = await Promise.all([1, 2, 3].map(() => submit(h.engine, call('short', {}))));
    await waitFor(
      () => (t.started.size === 2 ? true : undefined),
      () => `two jobs to start (${t.started.size} running)`,
    );
    expect(runner.activeJobs).toBe(2);
    const queued = await Promise.all(ids.map((id) => h.engine.get(OWNER, id)));
    expect(queued.filter((v) => v.record.state === 'submitted')).toHaveLength(1);
    t.shortGate.resolve();
    for (const id of ids) await waitForState(h.engine, id, 'completed');
  });
});

describe('a write the store fails', () => {
  it('does not fail the task: the job stops and the task runs again, as after a crash', async () => {
    const id = await submit(h.engine, call('chunks', {}));
    // The first artifact write of the job meets a store that has just gone away.
    const write = h.store.write.bind(h.store);
    let failures = 0;
    h.store.write = async (w, dedupe) => {
      if (failures === 0 && w.events.some((e) => e.kind === 'artifact')) {
        failures++;
        throw new Error('connection terminated unexpectedly');
      }
      return write(w, dedupe);
    };
    h.startRunner();
    const done = await waitForState(h.engine, id, 'completed');
    expect(failures).toBe(1);
    expect(t.runs('chunks')).toBe(2);
    expect(done).toMatchObject({ attempts: 2, interruptions: 0 });
    expect(textOf(done.statusMessage)).toBe('three chunks');
    const { history, artifacts } = await h.engine.get(OWNER, id);
    expect(history.map(textOf)).toContain('Interrupted by a restart; running again');
    expect(history.map(textOf).some((m) => m.startsWith('Job failed'))).toBe(false);
    expect(artifacts.map((a) => a.parts.map((p) => p.text).join(''))).toEqual(['abc']);
  });
});

describe('Runner.stop', () => {
  it('lets a short job finish and releases a long one, which another runner runs again', async () => {
    const first = h.startRunner({ concurrency: 2 });
    const shortId = await submit(h.engine, call('short', {}));
    const longId = await submit(h.engine, call('long', {}));
    await t.jobStarted(shortId);
    await t.jobStarted(longId);

    const stopping = first.stop(500);
    t.shortGate.resolve();
    await stopping;
    expect(first.activeJobs).toBe(0);
    expect((await h.engine.get(OWNER, shortId)).record.state).toBe('completed');
    expect(t.reasons.get(longId)).toBe('shutdown');
    const released = await h.engine.get(OWNER, longId);
    expect(released.record.state).toBe('working');
    expect(t.runs('long')).toBe(1);

    h.startRunner();
    const done = await waitForState(h.engine, longId, 'completed');
    expect(textOf(done.statusMessage)).toBe('long done on attempt 2');
    expect(t.runs('long')).toBe(2);
    expect(t.runs('short')).toBe(1);
  });

  it('claims nothing once stopped', async () => {
    const runner = h.startRunner();
    await runner.stop(100);
    const id = await submit(h.engine, call('quick', {}));
    runner.wake();
    // A second runner is the witness: the task is still there for it to claim.
    const [claim] = await h.store.claim('witness', h.engine.now(), 1000, 10);
    expect(claim?.record.id).toBe(id);
    expect(claim?.interrupted).toBe(false);
  });
});
