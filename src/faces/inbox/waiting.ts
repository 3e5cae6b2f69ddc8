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
  /** The question the task waits on (its status message's text). */
  prompt: string;
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

export function toWaitingItem(record: TaskRecord, caller: Principal, now: number): WaitingItem {
  const prompt = messageText(record.statusMessage);
  return {
    id: record.id,
    skill: record.skill,
    requester: readableOwner(record.owner),
    prompt,
    waitingSince: new Date(record.updatedAt).toISOString(),
    waitedMs: Math.max(0, now - record.updatedAt),
    ...(record.inputDeadline === undefined ? {} : { deadline: new Date(record.inputDeadline).toISOString() }),
    role: record.owner === ownerKey(caller) ? 'owner' : 'approver',
  };
}
