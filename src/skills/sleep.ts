import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineSkill } from '../engine/skill.js';

/** A demo job that just takes time: reports progress every second, honours cancel at once. */
export const sleepSkill = defineSkill({
  id: 'sleep',
  name: 'Sleep',
  description:
    'Waits the given number of seconds, reporting progress each second. A stand-in for any long job.',
  tags: ['demo', 'long-running'],
  examples: ['sleep 30', '{"skill":"sleep","input":{"seconds":600}}'],
  input: z.strictObject({ seconds: z.number().min(0).max(86_400).default(5) }),
  inputFromText: (text) => {
    const n = /(\d+(?:\.\d+)?)/.exec(text)?.[1];
    return n ? { seconds: Number(n) } : {};
  },
  pollIntervalMs: 1000,
  ttlMs: 86_400_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    const totalMs = ctx.input.seconds * 1000;
    const started = Date.now();
    for (;;) {
      const elapsed = Date.now() - started;
      await ctx.progress({
        percent: totalMs === 0 ? 100 : Math.min(100, Math.floor((elapsed / totalMs) * 100)),
      });
      if (elapsed >= totalMs) break;
      await sleep(Math.min(1000, totalMs - elapsed), undefined, { signal: ctx.signal });
    }
    return { message: `Slept ${ctx.input.seconds} s` };
  },
});
