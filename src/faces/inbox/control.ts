import { z } from 'zod';
import type { Part } from '../../engine/task.js';
import { answerTask } from '../answer.js';
import { preflightedJsonBody } from '../http/json-body.js';
import { principalOf } from '../http/problem.js';
import { type Handler, Refused } from '../http/route.js';
import type { InboxOptions } from './options.js';

const Answer = z.union([
  z.strictObject({
    decision: z.enum(['approve', 'reject']),
    comment: z.string().trim().max(2000).optional(),
  }),
  z.strictObject({ text: z.string().trim().min(1).max(10_000) }),
]);

/** An answer as the task reads it: a decision (and its comment) as data, a text as text. */
const partsOf = (answer: z.output<typeof Answer>): Part[] =>
  'text' in answer
    ? [{ text: answer.text }]
    : [{ data: { decision: answer.decision, ...(answer.comment ? { comment: answer.comment } : {}) } }];

/**
 * `POST /api/tasks/:id/answer`: the caller's answer to a task waiting for them (its owner, or an
 * approver it names), audited; an approver learns the receipt's state and nothing else of the task.
 * Under a JSON Content-Type, as the console's actions: no other site's page can answer for its visitor.
 */
export const answer =
  (o: InboxOptions): Handler =>
  async (req, res) => {
    const parsed = Answer.safeParse(await preflightedJsonBody(req, o));
    if (!parsed.success)
      throw new Refused(400, 'Send {"decision": "approve"|"reject", "comment"?: string} or {"text": string}');
    const id = String(req.params.id);
    const answered = await answerTask(o.engine, o.audit, principalOf(res), id, partsOf(parsed.data));
    res.json({ id, state: answered.grant === 'approver' ? answered.receipt.state : answered.record.state });
  };
