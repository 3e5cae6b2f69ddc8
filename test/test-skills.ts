import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { JobError } from '../src/engine/errors.js';
import { type AnySkill, defineSkill } from '../src/engine/skill.js';
import { latch, waitFor } from './helpers.js';

const common = { description: 'test skill', pollIntervalMs: 1000, ttlMs: 3_600_000 } as const;

/** Rejects with the signal's reason once it aborts: a job that honours cancel and shutdown. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

/**
 * Small skills for engine and runner tests, with probes: how often each ran, which runs are
 * active, what their signals said. A fresh set per test keeps the counters apart.
 */
export function testSkills() {
  const runs = new Map<string, number>();
  const count = (skill: string) => runs.set(skill, (runs.get(skill) ?? 0) + 1);
  /** Task ids whose job is running now (for "the job has started" waits). */
  const started = new Set<string>();
  /** The abort reason each task's job saw. */
  const reasons = new Map<string, unknown>();
  /** What a late write of the signal-ignoring job got. */
  const lateWrites = new Map<string, unknown>();
  /** Marks the job started, waits for its signal, records the reason and ends with it. */
  const holdUntilAborted = async (ctx: { taskId: string; signal: AbortSignal }): Promise<never> => {
    started.add(ctx.taskId);
    try {
      return await untilAborted(ctx.signal);
    } catch (reason) {
      reasons.set(ctx.taskId, reason);
      throw reason;
    } finally {
      started.delete(ctx.taskId);
    }
  };
  const stubbornGate = latch();
  const shortGate = latch();
  /** Per task: jobs running now and the most ever running at once. */
  const active = new Map<string, number>();
  const maxActive = new Map<string, number>();

  const quick = defineSkill({
    ...common,
    id: 'quick',
    input: z.object({ text: z.string().default('hi') }),
    inputFromText: (text) => ({ text: text || 'hi' }),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('quick');
      return { message: `done: ${ctx.input.text}` };
    },
  });

  const greet = defineSkill({
    ...common,
    id: 'greet',
    input: z.object({ name: z.string().min(1), excited: z.boolean().optional() }),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('greet');
      return { message: `Hello ${ctx.input.name}${ctx.input.excited ? '!' : ''}` };
    },
  });

  const waits = defineSkill({
    ...common,
    id: 'waits',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('waits');
      return holdUntilAborted(ctx);
    },
  });

  const stubborn = defineSkill({
    ...common,
    id: 'stubborn',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('stubborn');
      started.add(ctx.taskId);
      await stubbornGate.promise;
      reasons.set(ctx.taskId, ctx.signal.reason);
      try {
        await ctx.artifact({ parts: [{ text: 'too late' }] });
        lateWrites.set(ctx.taskId, 'written');
      } catch (err) {
        lateWrites.set(ctx.taskId, err);
      }
      started.delete(ctx.taskId);
      return { message: 'finished anyway' };
    },
  });

  const boom = defineSkill({
    ...common,
    id: 'boom',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run() {
      count('boom');
      throw new JobError('disk on fire');
    },
  });

  /** A skill with a bug: the runtime's own message must not reach the caller. */
  const buggy = defineSkill({
    ...common,
    id: 'buggy',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      const { nested } = ctx.input as { nested?: { deep: string } };
      return { message: (nested as { deep: string }).deep };
    },
  });

  const ask = defineSkill({
    ...common,
    id: 'ask',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('ask');
      const answer = await ctx.requestInput('What is your name?');
      const name = answer.parts.map((p) => p.text ?? '').join('');
      return { message: `Hello ${name} (attempt ${ctx.attempt})` };
    },
  });

  const chunks = defineSkill({
    ...common,
    id: 'chunks',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('chunks');
      await ctx.progress({ percent: 10, message: 'starting' });
      const artifactId = await ctx.artifact({ artifactId: 'out', name: 'out.txt', parts: [{ text: 'a' }] });
      await ctx.say('halfway');
      await ctx.progress({ percent: 50 });
      await ctx.artifact({ artifactId, parts: [{ text: 'b' }], append: true });
      await ctx.artifact({ artifactId, parts: [{ text: 'c' }], append: true, lastChunk: true });
      await ctx.progress({ percent: 100, message: 'done' });
      return { message: 'three chunks' };
    },
  });

  /** Fails rather than re-runs after an interruption. */
  const fragile = defineSkill({
    ...common,
    id: 'fragile',
    input: z.object({}),
    onInterrupt: 'fail',
    async run() {
      count('fragile');
      return { message: 'fragile done' };
    },
  });

  /** Counts concurrent executions per task; runs for `ms`. */
  const counted = defineSkill({
    ...common,
    id: 'counted',
    input: z.object({ ms: z.number().int().min(0) }),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('counted');
      const now = (active.get(ctx.taskId) ?? 0) + 1;
      active.set(ctx.taskId, now);
      maxActive.set(ctx.taskId, Math.max(now, maxActive.get(ctx.taskId) ?? 0));
      try {
        await sleep(ctx.input.ms, undefined, { signal: ctx.signal });
      } finally {
        active.set(ctx.taskId, (active.get(ctx.taskId) ?? 1) - 1);
      }
      return undefined;
    },
  });

  /** Finishes when the test opens `shortGate`. */
  const short = defineSkill({
    ...common,
    id: 'short',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('short');
      started.add(ctx.taskId);
      await shortGate.promise;
      started.delete(ctx.taskId);
      return { message: 'short done' };
    },
  });

  /** Waits on its signal in its first run; completes at once when run again. */
  const long = defineSkill({
    ...common,
    id: 'long',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('long');
      if (ctx.attempt > 1) return { message: `long done on attempt ${ctx.attempt}` };
      return holdUntilAborted(ctx);
    },
  });

  /** Asks for input once the test opens `askGate` (so an answer can come while it runs). */
  const askGate = latch();
  const asksWhenLet = defineSkill({
    ...common,
    id: 'asks-when-let',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      started.add(ctx.taskId);
      await askGate.promise;
      const answer = await ctx.requestInput('What is your name?');
      return { message: `Hello ${answer.parts.map((p) => p.text ?? '').join('')}` };
    },
  });

  /** Asks for input after its cancel: the cancel must win. */
  const asksLate = defineSkill({
    ...common,
    id: 'asks-late',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      count('asks-late');
      started.add(ctx.taskId);
      await untilAborted(ctx.signal).catch((reason: unknown) => reasons.set(ctx.taskId, reason));
      return ctx.requestInput('Too late?').then(() => undefined);
    },
  });

  /** Reports the same progress again and again, then a new one. */
  const repeats = defineSkill({
    ...common,
    id: 'repeats',
    input: z.object({}),
    onInterrupt: 'rerun',
    async run(ctx) {
      await ctx.progress({ percent: 10, message: 'same' });
      await sleep(300); // past the throttle: only the comparison can drop the repeat
      await ctx.progress({ percent: 10, message: 'same' });
      await ctx.progress({ percent: 20, message: 'same' });
      return undefined;
    },
  });

  const skills: AnySkill[] = [
    asksWhenLet,
    repeats,
    asksLate,
    quick,
    greet,
    waits,
    stubborn,
    boom,
    buggy,
    ask,
    chunks,
    fragile,
    counted,
    short,
    long,
  ];
  return {
    skills,
    runs: (skill: string) => runs.get(skill) ?? 0,
    started,
    /** Waits until the job of task `id` is running (for a test that acts on a running job). */
    jobStarted: (id: string) =>
      waitFor(
        () => started.has(id) || undefined,
        () => `the job of ${id} to start`,
      ),
    reasons,
    lateWrites,
    stubbornGate,
    shortGate,
    askGate,
    maxActive,
  };
}

export type TestSkills = ReturnType<typeof testSkills>;
