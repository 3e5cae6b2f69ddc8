import { setTimeout as sleep } from 'node:timers/promises';
import { defineSkill, JobError } from 'taskhandle';
import { z } from 'zod';

export const countdown = defineSkill({
  id: 'countdown',
  description: 'Counts down, one step a second, then writes a note',
  // strict: a key the skill does not know is refused, naming it, instead of dropped
  input: z.strictObject({ from: z.number().int().min(1).max(600).default(5) }),
  pollIntervalMs: 1000, // suggested to pollers; ctx.setPollInterval() changes it while running
  ttlMs: 3_600_000, // retention from creation, capped by MAX_TTL_MS
  onInterrupt: 'rerun', // after a crash: 'rerun' the job, or 'fail' it with a clear message
  async run(ctx) {
    const { from } = ctx.input;
    if (from === 13) throw new JobError('13 is unlucky; pick another number');
    for (let n = from - 1; n >= 0; n--) {
      await sleep(1000, undefined, { signal: ctx.signal }); // a cancel stops it here
      await ctx.progress({ percent: Math.round((100 * (from - n)) / from), message: `${n} to go` });
    }
    await ctx.artifact({ name: 'note.txt', parts: [{ text: `Counted down from ${from}` }] });
    return { message: 'Lift-off' };
  },
});
