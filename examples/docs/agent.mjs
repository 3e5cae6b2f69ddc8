import { createServer, defineSkill, JobError } from 'taskhandle';
import { z } from 'zod';

const ON_HOLD = new Set(['initech']);

const invoice = defineSkill({
  id: 'invoice',
  name: 'Invoice',
  description: 'Totals the amounts of an invoice; a total over 1000 waits for approval first',
  input: z.strictObject({
    customer: z.string().min(1),
    amounts: z.array(z.number().positive()).min(1),
  }),
  pollIntervalMs: 2000,
  ttlMs: 7 * 86_400_000, // capped by maxTtlMs, and by anonymousMaxTtlMs for anonymous callers
  onInterrupt: 'rerun', // it writes nothing outside its task: safe to run again after a crash
  async run(ctx) {
    const { customer, amounts } = ctx.input;
    if (ON_HOLD.has(customer)) throw new JobError(`customer "${customer}" is on hold; ask accounting`);
    const total = amounts.reduce((sum, a) => sum + a, 0);
    await ctx.progress({ percent: 50, message: `total ${total}` });
    if (total > 1000) {
      // The run ends here while the task waits; the answer runs it again from the top.
      const { value, from } = await ctx.ask({
        prompt: `Invoice ${customer} for ${total}? Answer approve or reject.`,
        schema: z.enum(['approve', 'reject'], 'answer approve or reject'),
        deadlineMs: 86_400_000,
      });
      if (value === 'reject') return { state: 'rejected', message: `Not invoiced: rejected by ${from}` };
    }
    await ctx.artifact({ name: 'invoice.json', parts: [{ data: { customer, amounts, total } }] });
    return { message: `Invoiced ${customer}: ${total}` };
  },
});

const server = await createServer({
  skills: [invoice],
  builtinSkills: false, // serve this skill alone
  port: 41241,
  database: 'sqlite:./data/invoices.db',
  logLevel: 'warn',
});
console.log(`invoice agent at ${server.url}, serving ${server.skills.map((s) => s.id).join(', ')}`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    server.close().then(() => console.log('stopped'));
  });
}
