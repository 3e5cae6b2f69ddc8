import { z } from 'zod';
import { defineSkill } from '../engine/skill.js';
import { Approval, Decision } from './decision.js';

const Input = Approval.extend({
  /** What is to be approved, as the approver will read it. */
  action: z.string().min(1).max(2000),
  details: z.string().max(10_000).optional(),
});

/**
 * Asks a named approver (or the requester) to approve or reject an action. The task waits in
 * input-required, holding no process, for as long as it takes (or until the deadline); it completes
 * with the decision and who made it, or is rejected.
 */
export const approvalSkill = defineSkill({
  id: 'approval',
  name: 'Approval',
  description:
    'Asks a named approver to approve or reject an action; completes with the decision and who made it.',
  tags: ['approval', 'human-in-the-loop'],
  examples: ['{"skill":"approval","input":{"action":"Deploy v2 to production","approver":"acme/ops-lead"}}'],
  input: Input,
  inputFromText: (text) => ({ action: text.trim() }),
  pollIntervalMs: 60_000,
  ttlMs: 30 * 86_400_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    const { action, details, approver, deadlineHours } = ctx.input;
    const { value, from } = await ctx.ask({
      prompt: `Approve or reject: ${action}${details ? `\n${details}` : ''}\nAnswer "approve" or "reject" (a comment may follow).`,
      schema: Decision,
      approvers: approver ? [approver] : [],
      deadlineMs: deadlineHours === undefined ? undefined : deadlineHours * 3_600_000,
    });
    const comment = value.comment ? `: ${value.comment}` : '';
    return value.decision === 'approve'
      ? { message: `Approved by ${from}${comment}` }
      : { state: 'rejected', message: `Rejected by ${from}${comment}` };
  },
});
