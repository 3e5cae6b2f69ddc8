import type { EngineContext } from './context.js';
import type { ClaimPolicy } from './fair-share.js';
import type { QueueCounts, QueuedStamp, TaskStamp } from './store-port.js';
import type { QueueStanding, TaskRecord } from './task.js';

/**
 * Queued tasks ahead are counted up to this many: a poll's cost stays bounded however long the
 * queue. Past it the poll interval no longer grows (250 ms x 240 reaches its 60 s maximum), so a
 * larger count would tell a caller nothing it acts on, at the cost of reading it on each poll.
 */
export const AHEAD_COUNT_CAP = 250;
/** While queued, callers are asked to wait this much longer per task ahead of theirs... */
const POLL_MS_PER_TASK_AHEAD = 250;
/** ...up to this much (a skill's own interval, when longer, stands). */
const MAX_QUEUED_POLL_MS = 60_000;

/** The key a task's counts are kept under: the counts hold while the task itself is unchanged. */
const stampKey = (t: { lastSeq: number; updatedAt: number }) => `${t.lastSeq}:${t.updatedAt}`;

/**
 * The record as a read shows it: while `submitted`, with where it stands in its owner's queue and
 * what it waits for, and a poll interval that grows with the wait (a far-back task is not polled
 * every second). Other states as stored.
 */
export async function withStanding(core: EngineContext, record: TaskRecord): Promise<TaskRecord> {
  if (record.state !== 'submitted') return record;
  const now = core.journal.now();
  const counts = await countsOf(core, record, record, now);
  return { ...record, ...standing(core.claimPolicy, { ...record, counts }, now) };
}

/**
 * The record as a read shows it, from counts its store read with it (a create's, a list page's):
 * while `submitted`, with its standing. The counts are kept for a second (queue-counts.ts), so
 * a poll right after counts nothing again. Without counts, or in another state, as stored.
 */
export function withCounts(
  core: EngineContext,
  record: TaskRecord,
  counts: QueueCounts | undefined,
  now: number,
): TaskRecord {
  if (record.state !== 'submitted' || !counts) return record;
  core.queueCounts.set(record.id, stampKey(record), counts, now);
  return { ...record, ...standing(core.claimPolicy, { ...record, counts }, now) };
}

/**
 * A poll's version read, with a queued task's standing: the stamp, and the counts in the same read
 * unless this task's were counted in the last second.
 */
export async function stampWithStanding(
  core: EngineContext,
  owner: string,
  id: string,
): Promise<(TaskStamp & { queue?: QueueStanding }) | undefined> {
  const now = core.journal.now();
  const counted = core.queueCounts.has(id, now);
  const stamp = await core.journal.store.getTaskStamp(
    id,
    now,
    counted ? undefined : { owner, cap: AHEAD_COUNT_CAP },
  );
  if (!stamp?.queued || stamp.owner !== owner) return stamp;
  const counts = await countsOf(core, { ...stamp, id }, stamp.queued, now);
  return { ...stamp, ...standing(core.claimPolicy, { ...stamp.queued, counts }, now) };
}

/** The counts of a queued task: as just read (then kept), as kept, or read now. */
async function countsOf(
  core: EngineContext,
  task: Pick<TaskRecord, 'id' | 'owner' | 'lastSeq' | 'updatedAt'>,
  queued: QueuedStamp,
  now: number,
): Promise<QueueCounts> {
  const version = stampKey(task);
  if (!queued.counts) {
    const kept = core.queueCounts.get(task.id, version, now);
    if (kept) return kept;
  }
  const counts =
    queued.counts ?? (await core.journal.store.queueCounts({ ...task, ...queued }, now, AHEAD_COUNT_CAP));
  core.queueCounts.set(task.id, version, counts, now);
  return counts;
}

/** A queued task's standing and the poll interval it asks for, from what the store counted. */
export function standing(
  policy: ClaimPolicy,
  q: Pick<QueuedStamp, 'skill' | 'runAfter' | 'pollIntervalMs'> & { counts: QueueCounts },
  now: number,
): { queue: QueueStanding; pollIntervalMs: number } {
  const queue = standingOf(q, q.counts, policy, now);
  const waitMs = Math.max(queue.ahead * POLL_MS_PER_TASK_AHEAD, (q.runAfter ?? now) - now);
  return { queue, pollIntervalMs: Math.max(q.pollIntervalMs, Math.min(waitMs, MAX_QUEUED_POLL_MS)) };
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
