// The skill module of spec-tests/package.test.ts, as a user writes one beside an installed
// taskhandle: it imports the package by its name and zod, nothing of this repository.
import { defineSkill, JobError } from 'taskhandle';
import { z } from 'zod';

/** Counts to n with a progress report per number, then writes the count as a text artifact. */
export const tally = defineSkill({
  id: 'tally',
  description: 'Counts to n, reporting progress, and writes the numbers as a text artifact',
  input: z.strictObject({ n: z.number().int().min(1).max(50) }),
  pollIntervalMs: 100,
  ttlMs: 3_600_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    const { n } = ctx.input;
    if (n === 13) throw new JobError('13 is not counted here');
    for (let i = 1; i <= n; i++) {
      await ctx.progress({ percent: Math.round((i / n) * 100), message: `${i} of ${n}` });
    }
    const text = Array.from({ length: n }, (_, i) => String(i + 1)).join('\n');
    await ctx.artifact({ name: 'tally.txt', parts: [{ text, mediaType: 'text/plain' }] });
    return { message: `Counted to ${n}` };
  },
});
