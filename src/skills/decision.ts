import { z } from 'zod';
import { APPROVER_NAME_FORMS, normalizeApproverName } from '../engine/grant.js';

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
  z.strictObject({
    decision: z.enum(['approve', 'reject'], {
      message: 'answer "approve" or "reject" (a comment may follow)',
    }),
    comment: z.string().max(2000).optional(),
  }),
);
export type Decision = z.infer<typeof Decision>;

/**
 * An approver's name: "tenant/principal" for an API key's principal ("key:tenant/principal" says the
 * same), "jwt:tenant/principal" for a token's subject. Kept in its one stored form.
 */
export const ApproverName = z.string().transform((name, ctx) => {
  const normalized = normalizeApproverName(name);
  if (normalized === undefined) {
    ctx.addIssue({ code: 'custom', message: `${APPROVER_NAME_FORMS}; got ${JSON.stringify(name)}` });
    return z.NEVER;
  }
  return normalized;
});

/** Asking a person: who may answer (else the requester) and for how long. */
export const Approval = z.strictObject({
  approver: ApproverName.optional(),
  /** Hours to wait for the decision before the task fails (default: as long as the task is kept). */
  deadlineHours: z
    .number()
    .positive()
    .max(24 * 365)
    .optional(),
});
