import { defineSkill } from 'taskhandle';
import { z } from 'zod';

export const deploy = defineSkill({
  id: 'deploy',
  description: 'Deploys v2 to production once acme/bob (or the requester) approves',
  input: z.strictObject({}),
  pollIntervalMs: 5000,
  ttlMs: 7 * 86_400_000,
  onInterrupt: 'fail', // a deploy cut short is looked at by a person, not run again
  async run(ctx) {
    // #region ask
    const { value, from } = await ctx.ask({
      prompt: 'Deploy v2 to production? (approve/reject)',
      schema: z.enum(['approve', 'reject']),
      approvers: ['acme/bob'],
      deadlineMs: 86_400_000,
    });
    if (value === 'reject') return { state: 'rejected', message: `Rejected by ${from}` };
    // #endregion ask
    return { message: `Deployed v2, approved by ${from}` };
  },
});
