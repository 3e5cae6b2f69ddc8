import { isInterrupted, type Message, type TaskRecord, type TaskState } from './task.js';

/**
 * Who may do what to a task, decided once, from its record alone (one indexed read, before anything
 * heavy): its `owner` may do everything; an `approver` (a name the task's approvers list holds) may
 * answer it while it waits (input-required, auth-required) and, with that answer, learn only what an
 * {@link AnswerReceipt} holds; to anyone else, and to an approver once the task stops waiting, the
 * task does not exist (the same answer as a missing task).
 */
export type Grant = 'owner' | 'approver';

/** What a caller may do, as its identity says. */
export interface CallerPolicy {
  /** Skills the caller may use; undefined for all. */
  skills?: ReadonlySet<string>;
  /** The name approver lists call this caller by ("tenant/principal", "jwt:tenant/principal"), if any. */
  approverName?: string;
  /** A worker's credential: it works tasks, and may use no skill as a caller. */
  worker?: boolean;
}

/** Who is asking: the owner key the engine scopes tasks by, and the name approver lists call them by. */
export interface Sender {
  owner: string;
  approverName?: string;
}

export function grantOf(
  record: Pick<TaskRecord, 'owner' | 'state' | 'approvers'>,
  sender: Sender,
): Grant | undefined {
  if (record.owner === sender.owner) return 'owner';
  const { approverName } = sender;
  if (approverName === undefined || !isInterrupted(record.state)) return undefined;
  return record.approvers?.includes(approverName) ? 'approver' : undefined;
}

/**
 * All an approver learns from answering: which task, the state the answer left it in, the question
 * answered, and who answered. Never the owner's history, artifacts, context, input or metadata, and
 * nothing of what the task does after it stops waiting.
 */
export interface AnswerReceipt {
  taskId: string;
  /** The task's state right after the answer (`submitted`: queued to run again). */
  state: TaskState;
  /** When the answer was taken (epoch ms). */
  at: number;
  /**
   * The question answered: the wait's status message, its text parts only, without the owner's
   * context id. What the answer must look like is in that text (`ctx.ask` puts it there, and a
   * refused answer adds why), so nothing else is kept for it.
   */
  prompt?: Message;
  /** The approver's name, as approver lists know it. */
  answeredBy: string;
}

export function receiptOf(
  waiting: Pick<TaskRecord, 'id' | 'statusMessage'>,
  after: Pick<TaskRecord, 'state' | 'updatedAt'>,
  answeredBy: string,
): AnswerReceipt {
  const asked = waiting.statusMessage;
  const parts = (asked?.parts ?? []).flatMap((p) => (p.text === undefined ? [] : [{ text: p.text }]));
  return {
    taskId: waiting.id,
    state: after.state,
    at: after.updatedAt,
    ...(asked
      ? { prompt: { messageId: asked.messageId, role: 'ROLE_AGENT', parts, taskId: waiting.id } }
      : {}),
    answeredBy,
  };
}

/**
 * Approver names say how the principal authenticated, so that a token issuer cannot answer for an
 * API-key holder of the same tenant and name: an API-key principal is "tenant/principal" (also
 * accepted as "key:tenant/principal"), a JWT principal "jwt:tenant/principal". In each segment '%',
 * '/', ':', spaces and control characters are written %XX, so no two principals share a name.
 */
export type PrincipalKind = 'api-key' | 'jwt';

const PREFIX: Record<PrincipalKind, string> = { 'api-key': '', jwt: 'jwt:' };
const ESCAPED = /[%/:\s\p{Cc}]/gu;
const SEGMENT = String.raw`(?:[^%/:\s\p{Cc}]|%[0-9A-F]{2})+`;
const NAME = new RegExp(`^(jwt:|key:)?(${SEGMENT}/${SEGMENT})$`, 'u');

const escapeSegment = (s: string): string => s.replace(ESCAPED, encodeURIComponent);

/** The name approver lists call a principal by. */
export const approverName = (kind: PrincipalKind, tenant: string, principal: string): string =>
  `${PREFIX[kind]}${escapeSegment(tenant)}/${escapeSegment(principal)}`;

/** What is wrong with a name that is not an approver name, for an error that names the field. */
export const APPROVER_NAME_FORMS =
  'must be "tenant/principal" (an API key\'s principal) or "jwt:tenant/principal" (a JWT\'s subject)';

/** A written approver name in its one stored form ("key:" dropped), or undefined if it is none. */
export function normalizeApproverName(name: string): string | undefined {
  const match = NAME.exec(name);
  if (!match?.[2]) return undefined;
  return match[1] === 'jwt:' ? `jwt:${match[2]}` : match[2];
}

/** Names one question may list as its approvers: each is checked on every answer and shown in the inbox. */
export const MAX_APPROVERS = 50;
/** The longest approver name, in characters (a principal's name, or `jwt:` and a subject). */
export const MAX_APPROVER_NAME = 300;

/**
 * A question's approver names in their stored form, or (the first malformed one) the words that
 * say which and why, for the asker to refuse in its own terms (a job's failure, a worker's 400).
 */
export function normalizeApprovers(names: readonly string[]): { names: string[] } | { problem: string } {
  if (names.length > MAX_APPROVERS) {
    return {
      problem: `approvers names ${names.length} approvers, more than the ${MAX_APPROVERS} a question may have`,
    };
  }
  const normalized: string[] = [];
  for (const [i, name] of names.entries()) {
    if (name.length > MAX_APPROVER_NAME)
      return {
        problem: `approvers[${i}] is ${name.length} characters long, more than the ${MAX_APPROVER_NAME} a name may be`,
      };
    const one = normalizeApproverName(name);
    if (one === undefined)
      return { problem: `approvers[${i}] ${APPROVER_NAME_FORMS}; got ${JSON.stringify(name)}` };
    normalized.push(one);
  }
  return { names: normalized };
}
