import { setTimeout as sleep } from 'node:timers/promises';
import { defineSkill } from 'taskhandle';
import { z } from 'zod';

export const countdown = defineSkill({
  id: 'countdown',
  description: 'Counts down, one step a second, then writes a note',
  input: z.strictObject({ from: z.number().int().min(1).max(600).default(5) }),
  pollIntervalMs: 1000, // what pollers are told
  ttlMs: 3_600_000, // how long the task is kept
  onInterrupt: 'rerun', // after a crash, run it again
  async run(ctx) {
    const { from } = ctx.input;
    for (let n = from - 1; n >= 0; n--) {
      await sleep(1000, undefined, { signal: ctx.signal }); // a cancel stops it here
      await ctx.progress({ percent: Math.round((100 * (from - n)) / from), message: `${n} to go` });
    }
    await ctx.artifact({ name: 'note.txt', parts: [{ text: `Counted down from ${from}` }] });
    return { message: 'Lift-off' };
  },
});
