import { ownerKey, type Principal } from '../../auth/principal.js';
import { approverName } from '../../engine/grant.js';
import type { TaskRecord } from '../../engine/task.js';
import { messageText } from '../handle.js';

/** One task waiting for the caller, as the inbox shows it. */
export interface WaitingItem {
  id: string;
  skill: string;
  /** Who asked: the task's owner, as an approver name ("acme/alice", or "jwt:acme/alice" for a token). */
  requester: string;
  /**
   * The question the task waits on (its status message's text), without what it tells A2A callers
   * about answering in text when the page answers with buttons (see {@link forThePage}).
   */
  prompt: string;
  /** How the page answers it: with Approve and Reject buttons, or in text. */
  answer: 'decision' | 'text';
  /** When it started waiting (ISO 8601), and for how long it has (ms). */
  waitingSince: string;
  waitedMs: number;
  /** When it fails without an answer (ISO 8601), if it has a deadline. */
  deadline?: string;
  /** The caller asked for it (owner) or is named to answer it (approver). */
  role: 'owner' | 'approver';
}

/**
 * An owner key as an approver name, the one form people read and write principals in:
 * "api-key:acme/alice" -> "acme/alice", a token's "jwt:acme/alice" stays "jwt:acme/alice" (so a
 * requester can be told apart from an API-key holder of the same name), "anonymous" as is.
 */
export function readableOwner(key: string): string {
  const match = /^(api-key|jwt):([^/]*)\/(.*)$/.exec(key);
  if (!match) return key;
  const [, via, tenant = '', id = ''] = match;
  return approverName(via === 'jwt' ? 'jwt' : 'api-key', decodeURIComponent(tenant), decodeURIComponent(id));
}

/**
 * The sentence that ends a decision's prompt for A2A callers, who answer in text (skills/approval.ts,
 * skills/export.ts): its presence is what says the task waits for approve or reject.
 */
const DECISION_HINT = /\s*Answer "approve" or "reject"(?: \(a comment may follow\))?\.$/;
/** What the engine adds after a text answer its schema refused (engine/skill-context.ts). */
const REFUSED_ANSWER = /\n\(Your last answer was not accepted: [^\n]*\)$/;

/**
 * A prompt as the page shows it. A decision's text-protocol hint (and the refusal of an earlier
 * text answer, which told the caller the same) is left out: the page's buttons send the decision.
 * A2A callers still read the status message as the skill wrote it.
 */
export function forThePage(text: string): Pick<WaitingItem, 'prompt' | 'answer'> {
  const asked = text.replace(REFUSED_ANSWER, '');
  if (!DECISION_HINT.test(asked)) return { prompt: text, answer: 'text' };
  return { prompt: asked.replace(DECISION_HINT, ''), answer: 'decision' };
}

export function toWaitingItem(record: TaskRecord, caller: Principal, now: number): WaitingItem {
  return {
    id: record.id,
    skill: record.skill,
    requester: readableOwner(record.owner),
    ...forThePage(messageText(record.statusMessage)),
    waitingSince: new Date(record.updatedAt).toISOString(),
    waitedMs: Math.max(0, now - record.updatedAt),
    ...(record.inputDeadline === undefined ? {} : { deadline: new Date(record.inputDeadline).toISOString() }),
    role: record.owner === ownerKey(caller) ? 'owner' : 'approver',
  };
}
