import type { Principal } from '../auth/principal.js';

/** What the audit log records: who did what to which task. */
export type AuditAction = 'create' | 'input' | 'cancel' | 'push-config-set' | 'push-config-delete';

/** An input's grant: the task's owner, or a named approver (with the name the task knew them by). */
export type AuditDetail = { grant: 'owner' } | { grant: 'approver'; approver: string };

export type Audit = (action: AuditAction, principal: Principal, taskId: string, detail?: AuditDetail) => void;
