import type { Core } from './core.js';
import type { ClaimPolicy } from './fair-share.js';
import type { QueueCounts } from './store-port.js';
import type { QueueStanding, TaskRecord } from './task.js';

/** Queued tasks ahead are counted up to this many: a poll's cost stays bounded however long the queue. */
export const AHEAD_COUNT_CAP = 1000;
/** While queued, callers are asked to wait this much longer per task ahead of theirs... */
const POLL_MS_PER_TASK_AHEAD = 250;
/** ...up to this much (a skill's own interval, when longer, stands). */
const MAX_QUEUED_POLL_MS = 60_000;

/**
 * The record as a read shows it: while `submitted`, with where it stands in its owner's queue and
 * what it waits for, and a poll interval that grows with the wait (a far-back task is not polled
 * every second). Other states as stored.
 */
export async function withStanding(core: Core, record: TaskRecord): Promise<TaskRecord> {
  if (record.state !== 'submitted') return record;
  const now = core.journal.now();
  const counts = await core.journal.store.queueCounts(record, now, AHEAD_COUNT_CAP);
  const queue = standingOf(record, counts, core.claimPolicy, now);
  const waitMs = Math.max(queue.ahead * POLL_MS_PER_TASK_AHEAD, (record.runAfter ?? now) - now);
  const pollIntervalMs = Math.max(record.pollIntervalMs, Math.min(waitMs, MAX_QUEUED_POLL_MS));
  return { ...record, queue, pollIntervalMs };
}

/** Where a queued task stands, from what it waits behind and the limits it is held by. */
export function standingOf(
  record: Pick<TaskRecord, 'skill' | 'runAfter'>,
  counts: QueueCounts,
  policy: ClaimPolicy,
  now: number,
): QueueStanding {
  const skillMax = policy.skillLimits?.[record.skill];
  const reason: QueueStanding['reason'] =
    record.runAfter !== undefined && record.runAfter > now
      ? 'retry backoff'
      : policy.tenantLimit !== undefined && counts.tenantRunning >= policy.tenantLimit
        ? 'tenant limit'
        : skillMax !== undefined && counts.skillRunning >= skillMax
          ? 'skill limit'
          : 'no free slot';
  return { position: counts.ahead + 1, ahead: counts.ahead, reason };
}
