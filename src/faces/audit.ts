import type { Principal } from '../auth/principal.js';

/** What the audit log records: who did what to which task. */
export type AuditAction =
  | 'create'
  | 'input'
  | 'cancel'
  | 'push-config-set'
  | 'push-config-delete'
  /** An operator queued a dead-lettered notification again (the console's "deliver again"). */
  | 'push-redeliver'
  /** A worker claimed a task, asked its owner a question, ended its run, or gave it back. */
  | 'work-claim'
  | 'work-ask'
  | 'work-complete'
  | 'work-fail'
  | 'work-release';

/** An input's grant: the task's owner, or a named approver (with the name the task knew them by). */
export type AuditDetail =
  | { grant: 'owner' }
  | { grant: 'approver'; approver: string }
  /** An operator acting on any owner's task (the console): the OPERATORS entry that let them in. */
  | { grant: 'operator'; operator: string; owner: string; configId?: string; seq?: number }
  /** A worker's write to a task it holds (the name it claimed under). */
  | { grant: 'worker'; worker: string };

export type Audit = (action: AuditAction, principal: Principal, taskId: string, detail?: AuditDetail) => void;
