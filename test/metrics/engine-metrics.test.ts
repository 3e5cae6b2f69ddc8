import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { EngineMetrics } from '../../src/metrics/engine-metrics.js';
import { answer, call, harnessEach, OWNER, submit, text, waitForState } from '../engine-harness.js';
import { waitFor } from '../helpers.js';
import { sampleOf } from './read.js';

/** The engine's observer port, heard by the real metrics, over a real engine on SQLite. */
const each = harnessEach();
const { h, t } = each;
let registry: Registry;
let refusals: Counter<'reason'>;

const open = (cancelGraceMs = 10_000) => {
  registry = new Registry();
  refusals = new Counter({
    name: 'refusals_total',
    help: 'h',
    labelNames: ['reason'],
    registers: [registry],
  });
  const observer = new EngineMetrics(registry, refusals);
  each.open({ skills: t.skills, defaultSkill: 'quick', cancelGraceMs, observer });
};
const value = (name: string, labels: Record<string, string> = {}) => sampleOf(registry, name, labels);

describe('EngineMetrics over the engine', () => {
  it('counts creates, claims, transitions, job outcomes and the wait for an answer, by skill', async () => {
    open();
    h.startRunner();
    const done = await submit(h.engine, call('quick', { text: 'hi' }));
    await waitForState(h.engine, done, 'completed');
    const failed = await submit(h.engine, call('boom', {}));
    await waitForState(h.engine, failed, 'failed');
    const asked = await submit(h.engine, call('ask', {}));
    await waitForState(h.engine, asked, 'input-required');
    await answer(h.engine, asked, text('Ada'));
    await waitForState(h.engine, asked, 'completed');

    expect(await value('taskhandle_tasks_created_total', { skill: 'quick' })).toBe(1);
    expect(await value('taskhandle_tasks_created_total', { skill: 'ask' })).toBe(1);
    const moved = (skill: string, from: string, to: string) =>
      value('taskhandle_task_transitions_total', { skill, from, to });
    expect(await moved('quick', 'submitted', 'working')).toBe(1);
    expect(await moved('quick', 'working', 'completed')).toBe(1);
    expect(await moved('boom', 'working', 'failed')).toBe(1);
    expect(await moved('ask', 'working', 'input-required')).toBe(1);
    expect(await moved('ask', 'input-required', 'submitted')).toBe(1);
    expect(await moved('ask', 'submitted', 'working')).toBe(2);
    const jobs = (skill: string, outcome: string) =>
      value('taskhandle_job_duration_seconds_count', { skill, outcome });
    expect(await jobs('quick', 'completed')).toBe(1);
    expect(await jobs('boom', 'failed')).toBe(1);
    expect(await jobs('ask', 'input-required')).toBe(1);
    expect(await jobs('ask', 'completed')).toBe(1);
    // The first run of each waited in the queue; the re-run after the answer is not counted again.
    expect(await value('taskhandle_queue_wait_seconds_count', { skill: 'ask' })).toBe(1);
    expect(await value('taskhandle_input_wait_seconds_count', { skill: 'ask' })).toBe(1);
    expect(await value('taskhandle_store_seconds_count', { op: 'create' })).toBe(3);
    // Each of the five state changes is one write: two ends, a failure, the ask and the answer.
    expect(await value('taskhandle_store_seconds_count', { op: 'write' })).toBe(5);
    expect(await value('taskhandle_store_seconds_count', { op: 'claim' })).toBeGreaterThan(0);
  });

  it('an idempotent retry creates nothing, and counts nothing', async () => {
    open();
    const message = call('quick', { text: 'once' });
    await submit(h.engine, message);
    await h.engine.submit({ owner: OWNER, skill: 'quick', input: { text: 'once' }, key: message.messageId });
    expect(await value('taskhandle_tasks_created_total', { skill: 'quick' })).toBe(1);
    expect(await value('taskhandle_store_seconds_count', { op: 'create' })).toBe(2);
  });

  it('tells a cancel at once from one forced after the grace, whose transition is from "any"', async () => {
    open(50);
    const queued = await submit(h.engine, call('quick', { text: 'never run' }));
    await h.engine.cancel(OWNER, queued);
    expect(await value('taskhandle_cancels_total', { skill: 'quick', outcome: 'at-once' })).toBe(1);
    expect(
      await value('taskhandle_task_transitions_total', { skill: 'quick', from: 'submitted', to: 'canceled' }),
    ).toBe(1);

    h.startRunner();
    const stubborn = await submit(h.engine, call('stubborn', {}));
    await waitFor(
      () => t.started.has(stubborn) || undefined,
      () => 'the job to start',
    );
    await h.engine.cancel(OWNER, stubborn);
    expect(await value('taskhandle_cancels_total', { skill: 'stubborn', outcome: 'forced' })).toBe(1);
    expect(await value('taskhandle_cancels_total', { skill: 'stubborn', outcome: 'in-grace' })).toBe(0);
    expect(
      await value('taskhandle_task_transitions_total', { skill: 'stubborn', from: 'any', to: 'canceled' }),
    ).toBe(1);
  });

  it('counts a takeover, and a task failed for crashing its runners', async () => {
    open();
    const id = await submit(h.engine, call('quick', { text: 'fragile' }));
    const [dead] = await h.store.claim('dead-worker', h.engine.now(), 100, 10);
    expect(dead?.record.id).toBe(id);
    h.startRunner({ pollMs: 10, maxInterruptions: 0 });
    await waitForState(h.engine, id, 'failed');
    expect(await value('taskhandle_lease_takeovers_total', { skill: 'quick' })).toBe(1);
    expect(await value('taskhandle_crash_loop_failures_total', { skill: 'quick' })).toBe(1);
    // The dead runner's claim was not this engine's: no fresh claim, no job run here.
    expect(await value('taskhandle_queue_wait_seconds_count', { skill: 'quick' })).toBe(0);
    expect(await value('taskhandle_job_duration_seconds_count', { skill: 'quick', outcome: 'failed' })).toBe(
      0,
    );
  });
});
