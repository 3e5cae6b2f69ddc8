import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobError } from '../../src/engine/errors.js';
import { NO_OBSERVER } from '../../src/engine/observer.js';
import { backoffMs } from '../../src/engine/retry.js';
import { defineSkill, type RetryPolicy } from '../../src/engine/skill.js';
import { handleOf } from '../../src/faces/handle.js';
import { call, harnessEach, submit, textOf, waitForState } from '../engine-harness.js';
import { waitFor } from '../helpers.js';

const T = Date.UTC(2026, 0, 1);
const POLICY: RetryPolicy = { attempts: 3, backoff: { initialMs: 10_000, maxMs: 15_000, jitter: 0 } };

/** Fails with `error(run)` until run `okOn` (never: always fails). */
function failing(id: string, error: (run: number) => Error, okOn = Number.POSITIVE_INFINITY, retry = POLICY) {
  const runs = new Map<string, number>();
  const skill = defineSkill({
    id,
    description: 'fails, then maybe not',
    input: z.object({}),
    pollIntervalMs: 1000,
    ttlMs: 3_600_000,
    onInterrupt: 'rerun',
    retry,
    async run(ctx) {
      const run = (runs.get(ctx.taskId) ?? 0) + 1;
      runs.set(ctx.taskId, run);
      if (run < okOn) throw error(run);
      return { message: `ok on run ${run}` };
    },
  });
  return { skill, runs: (taskId: string) => runs.get(taskId) ?? 0 };
}

const transient = (run: number) => new JobError(`upstream 503 (run ${run})`, 'upstream', { transient: true });
const flaky = failing('flaky', transient, 3);
const doomed = failing('doomed', transient);
const fatal = failing('fatal', (run) => new JobError(`bad input (run ${run})`));
const reset = failing('reset', () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 2, {
  ...POLICY,
  retryOn: ['ECONNRESET'],
});

const each = harnessEach();
const { h } = each;
let now = T;

/** How each run ended, as the metrics hear it. */
let outcomes: string[] = [];

function open() {
  now = T;
  outcomes = [];
  each.open({
    skills: [flaky.skill, doomed.skill, fatal.skill, reset.skill],
    clock: () => now,
    observer: { ...NO_OBSERVER, jobEnded: (_skill, outcome) => outcomes.push(outcome) },
    runner: { pollMs: 10 },
  });
}

/** Waits until the task's retry is written (its run count reached `runs` and it is queued again). */
const retried = (id: string, runs: number, skill: { runs: (id: string) => number }) =>
  waitFor(
    async () =>
      (skill.runs(id) === runs && (await h.engine.record('alice', id)).state === 'submitted') || undefined,
    () => `task ${id} to be queued again after run ${runs}`,
  );

describe('retries under a skill policy (fake clock)', () => {
  it('re-queues a transient failure after the backoff, saying which attempt failed and when the next is', async () => {
    open();
    const id = await submit(h.engine, call('flaky', {}));
    await retried(id, 1, flaky);
    const waiting = await h.engine.record('alice', id);
    expect(textOf(waiting.statusMessage)).toBe(
      `Attempt 1 of 3 failed: upstream 503 (run 1); next attempt at ${new Date(T + 10_000).toISOString()}`,
    );
    expect(handleOf(waiting)).toMatchObject({
      retries: 1,
      nextAttemptAt: new Date(T + 10_000).toISOString(),
      queue: { reason: 'retry backoff' },
    });
    // Not before its time: the runner polls on, the clock stands still.
    await sleep(100);
    expect(flaky.runs(id)).toBe(1);
    now = T + 10_000;
    await retried(id, 2, flaky);
    // The backoff doubled, up to its cap.
    expect(textOf((await h.engine.record('alice', id)).statusMessage)).toContain(
      `next attempt at ${new Date(T + 25_000).toISOString()}`,
    );
    now = T + 25_000;
    const done = await waitForState(h.engine, id, 'completed');
    expect(done).toMatchObject({ retries: 2, interruptions: 0, attempts: 3 });
    expect(textOf(done.statusMessage)).toBe('ok on run 3');
    // Retried runs are counted apart from failed ones (and from re-runs after a crash).
    expect(outcomes).toEqual(['retried', 'retried', 'completed']);
  });

  it('fails for good after the last attempt, with every attempt’s reason', async () => {
    open();
    const id = await submit(h.engine, call('doomed', {}));
    await retried(id, 1, doomed);
    now += 10_000;
    await retried(id, 2, doomed);
    now += 15_000;
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toBe(
      'Job failed after 3 attempts:\n1. upstream 503 (run 1)\n2. upstream 503 (run 2)\n3. upstream 503 (run 3)',
    );
    expect(failed.retryReasons).toEqual(['upstream 503 (run 1)', 'upstream 503 (run 2)']);
    // Counted once the run's bookkeeping settles, a moment after the state is published.
    await expect.poll(() => outcomes).toEqual(['retried', 'retried', 'failed']);
  });

  it('fails at once on a failure that is not transient, and retries a declared kind of error', async () => {
    open();
    const bad = await submit(h.engine, call('fatal', {}));
    expect(textOf((await waitForState(h.engine, bad, 'failed')).statusMessage)).toBe(
      'Job failed: bad input (run 1)',
    );
    expect(fatal.runs(bad)).toBe(1);
    const id = await submit(h.engine, call('reset', {}));
    await retried(id, 1, reset);
    now += 10_000;
    expect((await waitForState(h.engine, id, 'completed')).retries).toBe(1);
  });

  it('cancels a task that waits for its retry', async () => {
    open();
    const id = await submit(h.engine, call('doomed', {}));
    await retried(id, 1, doomed);
    expect((await h.engine.cancel('alice', id)).record.state).toBe('canceled');
    now += 60_000;
    await sleep(100);
    expect(doomed.runs(id)).toBe(1);
  });
});

describe('backoffMs', () => {
  it('doubles from initialMs up to maxMs, less at most `jitter` of it', () => {
    const p: RetryPolicy = { attempts: 9, backoff: { initialMs: 100, maxMs: 1000, jitter: 0.5 } };
    expect([0, 1, 2, 3, 4, 40].map((n) => backoffMs(p, n, () => 0))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    expect(backoffMs(p, 2, () => 1)).toBe(200);
    expect(backoffMs(p, 2, () => 0.5)).toBe(300);
  });
});
