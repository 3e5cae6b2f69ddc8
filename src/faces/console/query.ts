import { z } from 'zod';
import { ownerKey } from '../../auth/principal.js';
import { normalizeApproverName } from '../../engine/grant.js';
import type { OperatorListFilter } from '../../engine/operator.js';
import { TASK_STATES } from '../../engine/task.js';

/** Tasks a list page shows at most, and by default. */
export const MAX_PAGE = 200;
const DEFAULT_PAGE = 50;

/** A time as epoch milliseconds or an ISO 8601 date-time with its offset (what the page sends). */
const time = z
  .string()
  .trim()
  .refine((s) => /^\d{1,15}$/.test(s) || z.iso.datetime({ offset: true }).safeParse(s).success, {
    message: 'must be epoch milliseconds or an ISO 8601 date-time with an offset (2026-12-01T10:00:00Z)',
  })
  .transform((s) => (/^\d+$/.test(s) ? Number(s) : Date.parse(s)));

const List = z.strictObject({
  state: z.enum(TASK_STATES).optional(),
  skill: z.string().trim().min(1).max(200).optional(),
  owner: z
    .string()
    .trim()
    .max(500)
    .refine((o) => o === 'anonymous' || normalizeApproverName(o) !== undefined, {
      message: 'must be "tenant/principal", "jwt:tenant/principal" or "anonymous"',
    })
    .optional(),
  createdAfter: time.optional(),
  createdBefore: time.optional(),
  updatedAfter: time.optional(),
  updatedBefore: time.optional(),
  id: z.string().trim().min(1).max(200).optional(),
  pageSize: z.coerce.number().int().min(1).max(MAX_PAGE).default(DEFAULT_PAGE),
  pageToken: z.string().max(1000).optional(),
});

/** The list's query string, validated; or what is wrong with it, naming the parameter. */
export function parseListQuery(query: unknown): OperatorListFilter | { error: string } {
  const flat = Object.fromEntries(
    Object.entries((query ?? {}) as Record<string, unknown>).filter(([, v]) => v !== ''),
  );
  for (const [key, value] of Object.entries(flat)) {
    if (typeof value !== 'string') return { error: `${key}: give it once, as a plain value` };
  }
  const parsed = List.safeParse(flat);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys')
      return {
        error: `unknown parameter ${issue.keys.join(', ')}: the list takes state, skill, owner, createdAfter, createdBefore, updatedAfter, updatedBefore, id, pageSize, pageToken`,
      };
    return { error: `${issue?.path.join('.') || 'query'}: ${issue?.message ?? 'not valid'}` };
  }
  const q = parsed.data;
  return {
    state: q.state,
    skill: q.skill,
    owner: q.owner === undefined ? undefined : ownerOfName(q.owner),
    createdAfter: q.createdAfter,
    createdBefore: q.createdBefore,
    updatedAfter: q.updatedAfter,
    updatedBefore: q.updatedBefore,
    idContains: q.id,
    pageSize: q.pageSize,
    pageToken: q.pageToken,
  };
}

/** An owner as people write it (an approver name, see inbox/waiting.ts readableOwner) as its key. */
function ownerOfName(name: string): string {
  if (name === 'anonymous') return 'anonymous';
  const normal = normalizeApproverName(name) ?? name;
  const jwt = normal.startsWith('jwt:');
  const [tenant = '', id = ''] = (jwt ? normal.slice(4) : normal).split('/').map(decodeURIComponent);
  return ownerKey({ via: jwt ? 'jwt' : 'api-key', tenant, id });
}
