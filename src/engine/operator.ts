import { ACTIVITY_TASKS, type ActivitySeries, summarize } from './activity.js';
import type { ArtifactFile } from './artifact-reader.js';
import { cancel } from './cancel.js';
import { type EngineContext, notFound, storeRefusals } from './context.js';
import { EngineError } from './errors.js';
import type { LoggedEvent } from './events.js';
import type { DeliveryAttempt, OperatorFilter, OperatorPage, OutboxEntry } from './operator-port.js';
import type { NotificationKey } from './push.js';
import { artifactFile } from './reads.js';
import { stream } from './stream-generator.js';
import type { StreamItem, StreamOptions } from './streams.js';
import type { TaskRecord, TaskState, TaskView } from './task.js';

/**
 * Proof that the caller is an operator: made only by {@link grantOperator}, from the names the
 * caller is known by, before anything is read. Every operator read and action takes one; a grant
 * made any other way (a plain object) is refused.
 */
export interface OperatorGrant {
  /** The OPERATORS entry that let the caller in (for the audit log). */
  readonly operator: string;
}

const issued = new WeakSet<OperatorGrant>();

/** The grant of the first of `names` that `operators` holds, or undefined: not an operator. */
export function grantOperator(
  operators: ReadonlySet<string>,
  names: readonly string[],
): OperatorGrant | undefined {
  const operator = names.find((n) => operators.has(n));
  if (operator === undefined) return undefined;
  const grant = Object.freeze({ operator });
  issued.add(grant);
  return grant;
}

function check(grant: OperatorGrant): void {
  if (!issued.has(grant)) throw new EngineError('forbidden', 'Operator access is required');
}

/** Events of a task's timeline shown at most: the newest, with how many older ones were left out. */
export const TIMELINE_EVENTS = 500;
/** Delivery attempts shown per task (the store keeps at most ATTEMPTS_KEPT). */
const ATTEMPTS_SHOWN = 50;

export type OperatorListFilter = Omit<OperatorFilter, 'now'>;

/** One task as the console shows it: its record, timeline and webhook deliveries. */
export interface OperatorTask {
  record: TaskRecord;
  /** The newest {@link TIMELINE_EVENTS} events of its log, oldest first (progress included). */
  events: LoggedEvent[];
  /** Events older than those, left out. */
  eventsOmitted: number;
  /** Its webhooks: where they go (never their tokens or credentials). */
  webhooks: { id: string; url: string; allEvents: boolean }[];
  attempts: DeliveryAttempt[];
  outbox: OutboxEntry[];
}

/** Every owner's tasks, newest first, a keyset page at a time. */
export async function operatorList(
  core: EngineContext,
  grant: OperatorGrant,
  f: OperatorListFilter,
): Promise<OperatorPage> {
  check(grant);
  const { store, now } = core.journal;
  return storeRefusals(store.operator.listAllTasks({ ...f, now: now() }));
}

/**
 * How old the counts by state may be. Counting reads the whole state index (a quarter of a second
 * on a million tasks on SQLite, see docs/console.md): at most one count per this long, whatever the
 * number of operators and changes.
 */
export const COUNTS_FRESH_MS = 5000;

const counted = new WeakMap<
  EngineContext,
  { at: number; counts: Promise<Partial<Record<TaskState, number>>> }
>();

/** Tasks per state, at most {@link COUNTS_FRESH_MS} old. */
export async function operatorCounts(
  core: EngineContext,
  grant: OperatorGrant,
): Promise<Partial<Record<TaskState, number>>> {
  check(grant);
  const now = core.journal.now();
  const last = counted.get(core);
  if (last && now - last.at < COUNTS_FRESH_MS) return last.counts;
  const counts = core.journal.store.operator.countTasksByState();
  counted.set(core, { at: now, counts });
  // A failed count is not kept: the next call counts again.
  counts.catch(() => counted.delete(core));
  return counts;
}

/** Any owner's task (one indexed read decides it exists), then its log and deliveries. */
export async function operatorTask(
  core: EngineContext,
  grant: OperatorGrant,
  id: string,
): Promise<OperatorTask> {
  check(grant);
  const { store, now } = core.journal;
  const record = await store.getTask(id, now());
  if (!record) throw notFound(id);
  const after = Math.max(0, record.lastSeq - TIMELINE_EVENTS);
  const [events, configs, attempts, outbox] = await Promise.all([
    store.readEvents(id, after, TIMELINE_EVENTS),
    record.pushConfigs > 0 ? store.listPushConfigs(id) : [],
    store.operator.listAttempts(id, ATTEMPTS_SHOWN),
    store.operator.listOutbox(id),
  ]);
  return {
    record,
    events,
    eventsOmitted: after,
    webhooks: configs.map((c) => ({ id: c.id, url: c.url, allEvents: c.allEvents })),
    attempts,
    outbox,
  };
}

/** The owner of any task, decided by one indexed read (missing: not found). */
async function ownerOf(core: EngineContext, id: string): Promise<string> {
  const { store, now } = core.journal;
  const record = await store.getTask(id, now());
  if (!record) throw notFound(id);
  return record.owner;
}

/** Cancels any owner's task, as its owner would (same transitions, same grace for a running job). */
export async function operatorCancel(
  core: EngineContext,
  grant: OperatorGrant,
  id: string,
): Promise<TaskView> {
  check(grant);
  return cancel(core, await ownerOf(core, id), id);
}

/** One artifact of any owner's task, streamed a piece at a time. */
export async function operatorArtifact(
  core: EngineContext,
  grant: OperatorGrant,
  id: string,
  artifactId: string,
): Promise<ArtifactFile> {
  check(grant);
  return artifactFile(core, await ownerOf(core, id), id, artifactId);
}

/** Queues a dead letter again, due now; the dispatcher hears of it at once. Gives the task's owner. */
export async function operatorRedeliver(
  core: EngineContext,
  grant: OperatorGrant,
  key: NotificationKey,
): Promise<{ owner: string }> {
  check(grant);
  const { store, now } = core.journal;
  const owner = await ownerOf(core, key.taskId);
  if (!(await store.operator.redeliver(key, now()))) {
    throw new EngineError(
      'task-not-found',
      `Task ${key.taskId} has no dead letter ${key.seq} for webhook ${key.configId} (delivered, or its webhook deleted)`,
    );
  }
  core.journal.pushQueued();
  return { owner };
}

/** The last `windowMs` of activity per minute, from the store's rows of that window. */
export async function operatorActivity(
  core: EngineContext,
  grant: OperatorGrant,
  windowMs: number,
): Promise<ActivitySeries> {
  check(grant);
  const now = core.journal.now();
  const activity = await core.journal.store.operator.recentActivity(now - windowMs, ACTIVITY_TASKS);
  return summarize(activity, now, windowMs);
}

/** Any owner's task as a stream (its state, then each event), as its owner would follow it. */
export async function* operatorStream(
  core: EngineContext,
  grant: OperatorGrant,
  id: string,
  options: StreamOptions,
): AsyncGenerator<StreamItem> {
  check(grant);
  yield* stream(core, await ownerOf(core, id), id, { holder: `operator:${grant.operator}`, ...options });
}
