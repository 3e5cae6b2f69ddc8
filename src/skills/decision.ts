import { z } from 'zod';

/**
 * An approver's decision, from a data part (`{"decision": "approve", "comment": "..."}`) or from
 * text ("approve", "yes, go ahead", "reject: not on a Friday").
 */
export const Decision = z.preprocess(
  (raw) => {
    if (typeof raw !== 'string') return raw;
    const match = /^\s*(approve|approved|yes|ok|reject|rejected|no|deny)\b[\s:,.-]*(.*)$/is.exec(raw);
    if (!match?.[1]) return { decision: raw };
    const approve = ['approve', 'approved', 'yes', 'ok'].includes(match[1].toLowerCase());
    return { decision: approve ? 'approve' : 'reject', comment: match[2]?.trim() || undefined };
  },
  z.object({
    decision: z.enum(['approve', 'reject'], {
      message: 'answer "approve" or "reject" (a comment may follow)',
    }),
    comment: z.string().max(2000).optional(),
  }),
);
export type Decision = z.infer<typeof Decision>;

/** Asking a person: who may answer ("tenant/principal"; else the requester) and for how long. */
export const Approval = z.object({
  approver: z
    .string()
    .regex(/^[^/\s]+\/[^/\s]+$/, 'must be "tenant/principal"')
    .optional(),
  /** Hours to wait for the decision before the task fails (default: as long as the task is kept). */
  deadlineHours: z
    .number()
    .positive()
    .max(24 * 365)
    .optional(),
});
