import { notifiesByDefault } from '../../engine/push.js';
import type { Created, NewTask, QueueCounts, WriteResult } from '../../engine/store-port.js';
import { TooManyTasks } from '../../engine/store-port.js';
import { json, newTaskRow, type TaskRow, toRecord } from '../rows.js';
import { type CountsRow, toQueueCounts } from './counts.js';
import type { Db } from './db.js';
import { type Encoded, encode, logged, pushValues } from './params.js';
import { STATEMENTS as Q } from './statements.js';

/**
 * What the insert statement did: the owner's count of unfinished tasks, and the row if it made one
 * (with its standing's counts when asked for).
 */
interface Made {
  active: number;
  row?: TaskRow;
  counts?: QueueCounts;
}

/** What one attempt at a create did (create-batch.ts makes the first attempt of a batch's creates). */
export type Inserted =
  | { kind: 'created'; result: WriteResult; counts?: QueueCounts }
  /** The message id names a task already (or a create of it is racing this one). */
  | { kind: 'taken' }
  | { kind: 'too-many'; active: number }
  /** Within `slack` of the owner's limit: only a create holding the owner's lock may decide. */
  | { kind: 'near-limit' };

/**
 * Inserts a task with its events (and the webhooks given with its first message), or returns the
 * task its (owner, messageId) already made, unless that one has expired. The owner's limit of
 * unfinished tasks (`maxActive`) is counted in the insert's own statement: first without a lock,
 * refused within `maxConnections` of the limit (however many creates run at once, they cannot pass
 * it together); near the limit, the creates of one owner take an advisory lock, one at a time.
 * `first`, when given, is what the first attempt did (a batch's statement made it).
 */
export async function createTask(
  db: Db,
  maxConnections: number,
  task: NewTask,
  first?: Inserted,
): Promise<Created> {
  const events = encode(task.events);
  for (let attempt = 0; attempt < 3; attempt++) {
    let outcome = (attempt === 0 && first) || (await insertTask(db, task, events, maxConnections));
    if (outcome.kind === 'near-limit') outcome = await insertTask(db, task, events, 0);
    if (outcome.kind === 'created') {
      const { result, counts } = outcome;
      return { result, created: true, ...(counts && { counts }) };
    }
    const row = await db.one<TaskRow>(Q.findByMessageId, [task.owner, task.messageId]);
    if (row && row.expires_at > task.createdAt) {
      return { result: { record: toRecord(row), events: [] }, created: false };
    }
    if (row) {
      // The task this message made has expired and waits for the sweeper: the messageId is free again.
      await db.query(Q.forgetMessageId, [task.owner, task.messageId, row.id]);
      continue;
    }
    if (outcome.kind === 'too-many') throw new TooManyTasks(outcome.active);
    // The message id was taken by a create that then failed, or was swept meanwhile: try again.
  }
  throw new Error(`createTask: message id ${task.messageId} kept changing hands`);
}

/** One attempt; `slack` 0 means: under the owner's lock, decide exactly. */
async function insertTask(db: Db, task: NewTask, events: Encoded, slack: number): Promise<Inserted> {
  const max = task.maxActive;
  const locked = max !== undefined && slack === 0;
  const values = [
    task.id,
    task.contextId,
    task.owner,
    task.skill,
    json(task.input),
    json(task.metadata),
    task.createdAt,
    task.expiresAt,
    task.ttlMs,
    task.pollIntervalMs,
    task.messageId,
    events.kinds,
    events.payloads,
    max ?? null,
    slack,
    task.tenant ?? task.owner,
    task.priority ?? 0,
    task.queueAt ?? task.createdAt,
    task.trace?.traceparent ?? null,
    task.trace?.tracestate ?? null,
    // The counted variant's one more parameter (statements.ts, createTaskCounted).
    ...(task.queueCap === undefined ? [] : [task.queueCap]),
  ];
  const statement = task.queueCap === undefined ? Q.createTask : Q.createTaskCounted;
  const configs = task.pushConfigs ?? [];
  const made = await db.maybeTransaction(locked || configs.length > 0, async (client): Promise<Made> => {
    if (locked) await client.query({ ...Q.lockOwner, values: [task.owner] });
    const r = (
      await client.query<{ active: number; id: string | null } & Partial<CountsRow>>({
        ...statement,
        values,
      })
    ).rows[0];
    const active = r?.active ?? 0;
    if (!r || r.id === null) return { active };
    const row = newTaskRow(task);
    const counts = r.ahead == null ? undefined : toQueueCounts(r as CountsRow);
    if (configs.length === 0) return { active, row, counts };
    for (const config of configs) await client.query({ ...Q.putPushConfig, values: pushValues(config) });
    const seqs = task.events.map((_, i) => i + 1);
    const notable = task.events.map((e) => (notifiesByDefault(e) ? 1 : 0));
    await client.query({ ...Q.queueNotifications, values: [task.id, task.createdAt, seqs, notable] });
    const counted = await client.query<{ push_configs: number }>({
      ...Q.countPushConfigs,
      values: [task.id],
    });
    return { active, row: { ...row, push_configs: counted.rows[0]?.push_configs ?? 0 }, counts };
  });
  if (made.row) {
    const { row, counts } = made;
    const result = { record: toRecord(row), events: logged(row, 1, task.events) };
    return { kind: 'created', result, ...(counts && { counts }) };
  }
  return notInserted(max, made.active, slack);
}

/** Why a create that made no task made none, from the owner's count its statement read. */
export function notInserted(max: number | undefined, active: number, slack: number): Inserted {
  if (max === undefined || active + slack < max) return { kind: 'taken' };
  return active >= max ? { kind: 'too-many', active } : { kind: 'near-limit' };
}
