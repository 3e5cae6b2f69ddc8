// The skills of this agent. `taskhandle serve --skills ./skills.mjs` serves every skill this module
// exports; server.mjs imports them.
import { defineSkill, JobError } from 'taskhandle';
import { z } from 'zod';

/** Builds a month's sales report as a CSV file, one row per day. */
export const report = defineSkill({
  id: 'report',
  name: 'Monthly report',
  description: 'Builds the sales report of a month (YYYY-MM) as a CSV file, one row per day.',
  examples: ['{"skill":"report","input":{"month":"2025-01"}}'],
  input: z.strictObject({ month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'a month as YYYY-MM') }),
  pollIntervalMs: 1000,
  ttlMs: 86_400_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    const { month } = ctx.input;
    const [year, mon] = month.split('-').map(Number);
    // A JobError's message is what the caller is told; any other error only says the job failed.
    if (Date.UTC(year, mon - 1) > Date.now()) throw new JobError(`${month} has not begun: nothing to report`);
    const days = new Date(Date.UTC(year, mon, 0)).getUTCDate();
    const lines = ['day,orders,revenue'];
    for (let day = 1; day <= days; day++) {
      ctx.signal.throwIfAborted();
      // Stands in for a query: the same month always gives the same numbers, so a re-run is harmless.
      const orders = 10 + ((day * 7 + mon * 3) % 40);
      lines.push(`${month}-${String(day).padStart(2, '0')},${orders},${(orders * 19.5).toFixed(2)}`);
      if (day % 10 === 0) {
        await ctx.progress({ percent: Math.round((day / days) * 100), message: `${day} of ${days} days` });
      }
    }
    const filename = `report-${month}.csv`;
    const csv = `${lines.join('\r\n')}\r\n`;
    await ctx.artifact({
      name: filename,
      parts: [{ raw: Buffer.from(csv).toString('base64'), filename, mediaType: 'text/csv' }],
    });
    return { message: `Report for ${month}: ${days} days in ${filename}` };
  },
});
