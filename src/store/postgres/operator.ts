import {
  ATTEMPTS_KEPT,
  type AttemptOutcome,
  type AttemptRecord,
  type DeliveryAttempt,
  type OperatorFilter,
  type OperatorPage,
  type OperatorStore,
  type OutboxEntry,
  type RecentActivity,
} from '../../engine/operator-port.js';
import type { DeliveryOutcome, NotificationKey } from '../../engine/push.js';
import type { TaskState } from '../../engine/task.js';
import {
  type ActivityRow,
  type AttemptRow,
  keysetBounds,
  type OutboxRow,
  orderOf,
  toActivity,
  toAttempt,
  toOperatorPage,
  toOutboxEntry,
} from '../operator-rows.js';
import type { TaskRow } from '../rows.js';
import type { Db, Queryable } from './db.js';
import type { Statement } from './statements.js';

/**
 * Filters every variant of the list applies as it walks its index (NULL: not filtered). $1 now,
 * $2 skill, $3 owner, $4 state, $5 created after, $6 created before, $7 id text, $8 the walk's lower
 * bound, $9-$10 its upper bound (time, id), $11 limit, $12 updated after, $13 updated before.
 */
const RESIDUAL = `expires_at > $1
  AND ($2::text IS NULL OR skill = $2) AND ($3::text IS NULL OR owner = $3)
  AND ($4::text IS NULL OR state = $4)
  AND ($5::bigint IS NULL OR created_at > $5) AND ($6::bigint IS NULL OR created_at < $6)
  AND ($12::bigint IS NULL OR updated_at > $12) AND ($13::bigint IS NULL OR updated_at < $13)
  AND ($7::text IS NULL OR strpos(id, $7) > 0)`;

/**
 * The list in four variants, one per index it walks newest first (see sqlite/operator.ts): the
 * leading equality (or the order's time) picks the index, the row-value bound seeks it to the page.
 */
const listOf = (leading: string, time = 'updated_at') =>
  `SELECT * FROM tasks WHERE ${leading} ${RESIDUAL} AND ${time} > $8 AND (${time}, id) < ($9::bigint, $10::text)
    ORDER BY ${time} DESC, id DESC LIMIT $11`;

const SQL = {
  listAll: listOf(''),
  listByOwner: listOf('owner = $3 AND'),
  listByState: listOf('state = $4 AND'),
  listByCreation: listOf('', 'created_at'),
  countByState: 'SELECT state, count(*)::int AS n FROM tasks GROUP BY state',
  listAttempts: `SELECT task_id, config_id, seq, attempt, at, duration_ms, status, outcome, error
    FROM push_attempts WHERE task_id = $1 ORDER BY id DESC LIMIT $2`,
  listOutbox: `SELECT task_id, config_id, seq, created_at, attempts, next_attempt_at, last_error, dead_at
    FROM push_outbox WHERE task_id = $1 ORDER BY seq, config_id`,
  // Only a dead letter whose webhook still exists; its age counts from now (PUSH_MAX_AGE_MS anew).
  redeliver: `UPDATE push_outbox SET dead_at = NULL, next_attempt_at = $4, created_at = $4,
      attempts = 0, leased_until = 0
    WHERE task_id = $1 AND config_id = $2 AND seq = $3 AND dead_at IS NOT NULL
      AND EXISTS (SELECT 1 FROM push_configs c WHERE c.task_id = $1 AND c.id = $2)`,
  insertAttempt: `INSERT INTO push_attempts
      (task_id, config_id, seq, attempt, at, duration_ms, status, outcome, error)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  trimAttempts: `DELETE FROM push_attempts WHERE task_id = $1 AND id <= (SELECT id FROM push_attempts
      WHERE task_id = $1 ORDER BY id DESC OFFSET ${ATTEMPTS_KEPT} LIMIT 1)`,
  recentTasks: `SELECT state, created_at, updated_at, (SELECT min(e.at) FROM events e
        WHERE e.task_id = t.id AND e.kind = 'status' AND e.payload LIKE '{"kind":"status","state":"working"%')
        AS started_at
    FROM tasks t WHERE updated_at > $1 ORDER BY updated_at DESC, id DESC LIMIT $2`,
  queuedBefore: `SELECT state, created_at, updated_at, NULL::bigint AS started_at FROM tasks
    WHERE state = 'submitted' AND updated_at <= $1 ORDER BY created_at LIMIT $2`,
  recentAttempts: `SELECT at / 60000 AS minute, outcome, count(*)::int AS count FROM push_attempts
    WHERE at > $1 GROUP BY minute, outcome`,
} as const;

const Q = Object.fromEntries(
  Object.entries(SQL).map(([key, text]) => [key, { name: `taskhandle_operator_${key}`, text }]),
) as { readonly [K in keyof typeof SQL]: Statement };

/** The PostgreSQL side of {@link OperatorStore}, over the store's pool. */
export class PostgresOperator implements OperatorStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async listAllTasks(f: OperatorFilter): Promise<OperatorPage> {
    const b = keysetBounds(f);
    const values = [
      f.now,
      f.skill ?? null,
      f.owner ?? null,
      f.state ?? null,
      f.createdAfter ?? null,
      f.createdBefore ?? null,
      f.idContains || null,
      b.after,
      b.upperAt,
      b.upperId,
      f.pageSize + 1,
      f.updatedAfter ?? null,
      f.updatedBefore ?? null,
    ];
    const order = orderOf(f);
    const statement =
      order === 'createdAt'
        ? Q.listByCreation
        : f.owner !== undefined
          ? Q.listByOwner
          : f.state !== undefined
            ? Q.listByState
            : Q.listAll;
    return toOperatorPage(await this.#db.query<TaskRow>(statement, values), f.pageSize, order);
  }

  async countTasksByState(): Promise<Partial<Record<TaskState, number>>> {
    const rows = await this.#db.query<{ state: TaskState; n: number }>(Q.countByState, []);
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  async listAttempts(taskId: string, limit: number): Promise<DeliveryAttempt[]> {
    return (await this.#db.query<AttemptRow>(Q.listAttempts, [taskId, limit])).map(toAttempt);
  }

  async listOutbox(taskId: string): Promise<OutboxEntry[]> {
    return (await this.#db.query<OutboxRow>(Q.listOutbox, [taskId])).map(toOutboxEntry);
  }

  async redeliver(key: NotificationKey, now: number): Promise<boolean> {
    const result = await this.#db.pool.query({
      ...Q.redeliver,
      values: [key.taskId, key.configId, key.seq, now],
    });
    return (result.rowCount ?? 0) > 0;
  }

  async recentActivity(since: number, limit: number): Promise<RecentActivity> {
    const [recent, queued, attempts] = await Promise.all([
      this.#db.query<ActivityRow>(Q.recentTasks, [since, limit]),
      this.#db.query<ActivityRow>(Q.queuedBefore, [since, limit]),
      this.#db.query<{ minute: number; outcome: AttemptOutcome; count: number }>(Q.recentAttempts, [since]),
    ]);
    return { tasks: [...recent, ...queued].map(toActivity), attempts };
  }

  /** Inside the settle's transaction: the attempt is kept with its outcome, or neither. */
  async recordAttempt(
    client: Queryable,
    key: NotificationKey,
    outcome: DeliveryOutcome,
    attempt: AttemptRecord,
  ): Promise<void> {
    await client.query({
      ...Q.insertAttempt,
      values: [
        key.taskId,
        key.configId,
        key.seq,
        attempt.attempt,
        attempt.at,
        attempt.durationMs,
        attempt.status ?? null,
        outcome.kind,
        outcome.kind === 'delivered' ? null : outcome.error,
      ],
    });
    await client.query({ ...Q.trimAttempts, values: [key.taskId] });
  }
}
