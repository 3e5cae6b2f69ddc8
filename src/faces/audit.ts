import type { Principal } from '../auth/principal.js';

/** What the audit log records: who did what to which task. */
export type AuditAction =
  | 'create'
  | 'input'
  | 'cancel'
  | 'push-config-set'
  | 'push-config-delete'
  /** An operator queued a dead-lettered notification again (the console's "deliver again"). */
  | 'push-redeliver';

/** An input's grant: the task's owner, or a named approver (with the name the task knew them by). */
export type AuditDetail =
  | { grant: 'owner' }
  | { grant: 'approver'; approver: string }
  /** An operator acting on any owner's task (the console): the OPERATORS entry that let them in. */
  | { grant: 'operator'; operator: string; owner: string; configId?: string; seq?: number };

export type Audit = (action: AuditAction, principal: Principal, taskId: string, detail?: AuditDetail) => void;
