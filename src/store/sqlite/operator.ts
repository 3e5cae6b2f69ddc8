import type Database from 'better-sqlite3';
import {
  type ActivityTask,
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

/** Filters every variant of the list applies as it walks its index (NULL: not filtered). */
const RESIDUAL = `expires_at > @now
  AND (@skill IS NULL OR skill = @skill)
  AND (@owner IS NULL OR owner = @owner)
  AND (@state IS NULL OR state = @state)
  AND (@created_after IS NULL OR created_at > @created_after)
  AND (@created_before IS NULL OR created_at < @created_before)
  AND (@updated_after IS NULL OR updated_at > @updated_after)
  AND (@updated_before IS NULL OR updated_at < @updated_before)
  AND (@id_text IS NULL OR instr(id, @id_text) > 0)`;

/**
 * The list in four variants, one per index it walks newest first: an owner's tasks (tasks_by_owner),
 * a state's (tasks_by_state), all (tasks_by_update), or, with a created range, all by creation
 * (tasks_by_creation). Each seeks to the page's bounds over (time, id), so the cost of a page follows
 * its size and the filters' selectivity, not how deep it is.
 */
const listOf = (
  index: string,
  leading: string,
  time = 'updated_at',
) => `SELECT * FROM tasks INDEXED BY ${index}
  WHERE ${leading} ${RESIDUAL} AND ${time} > @lower AND (${time}, id) < (@upper_at, @upper_id)
  ORDER BY ${time} DESC, id DESC LIMIT @limit`;

const SQL = {
  listAll: listOf('tasks_by_update', ''),
  listByOwner: listOf('tasks_by_owner', 'owner = @owner AND'),
  listByState: listOf('tasks_by_state', 'state = @state AND'),
  listByCreation: listOf('tasks_by_creation', '', 'created_at'),
  countByState: 'SELECT state, count(*) AS n FROM tasks GROUP BY state',
  listAttempts: `SELECT task_id, config_id, seq, attempt, at, duration_ms, status, outcome, error
    FROM push_attempts WHERE task_id = ? ORDER BY id DESC LIMIT ?`,
  listOutbox: `SELECT task_id, config_id, seq, created_at, attempts, next_attempt_at, last_error, dead_at
    FROM push_outbox WHERE task_id = ? ORDER BY seq, config_id`,
  // Only a dead letter whose webhook still exists: another would wait for ever, never claimed.
  // Its age counts from now: it gets PUSH_MAX_AGE_MS of retries again.
  redeliver: `UPDATE push_outbox SET dead_at = NULL, next_attempt_at = @now, created_at = @now,
      attempts = 0, leased_until = 0
    WHERE task_id = @task_id AND config_id = @config_id AND seq = @seq AND dead_at IS NOT NULL
      AND EXISTS (SELECT 1 FROM push_configs c WHERE c.task_id = @task_id AND c.id = @config_id)`,
  insertAttempt: `INSERT INTO push_attempts
      (task_id, config_id, seq, attempt, at, duration_ms, status, outcome, error)
    VALUES (@task_id, @config_id, @seq, @attempt, @at, @duration_ms, @status, @outcome, @error)`,
  // Keeps the task's newest attempts only: its history is bounded whatever its webhooks do.
  trimAttempts: `DELETE FROM push_attempts WHERE task_id = @task_id AND id <= (SELECT id FROM push_attempts
      WHERE task_id = @task_id ORDER BY id DESC LIMIT 1 OFFSET ${ATTEMPTS_KEPT})`,
  deleteAttempts: 'DELETE FROM push_attempts WHERE task_id = ?',
  // The first `working` status of the task: when a runner first took it.
  recentTasks: `SELECT state, created_at, updated_at, (SELECT min(e.at) FROM events e
        WHERE e.task_id = t.id AND e.kind = 'status' AND e.payload LIKE '{"kind":"status","state":"working"%')
        AS started_at
    FROM tasks t INDEXED BY tasks_by_update WHERE updated_at > @since
    ORDER BY updated_at DESC, id DESC LIMIT @limit`,
  queuedBefore: `SELECT state, created_at, updated_at, NULL AS started_at FROM tasks
    WHERE state = 'submitted' AND updated_at <= @since ORDER BY created_at LIMIT @limit`,
  recentAttempts: `SELECT at / 60000 AS minute, outcome, count(*) AS count FROM push_attempts
    WHERE at > ? GROUP BY minute, outcome`,
} as const;

type Statements = { [K in keyof typeof SQL]: Database.Statement };

/**
 * The SQLite side of {@link OperatorStore}, over the store's connection; writes go through the
 * store's group commit (`run`).
 */
export class SqliteOperator implements OperatorStore {
  readonly #q: Statements;
  readonly #run: <T>(work: () => T) => Promise<T>;

  constructor(db: Database.Database, run: <T>(work: () => T) => Promise<T>) {
    this.#q = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)])) as Statements;
    this.#run = run;
  }

  async listAllTasks(f: OperatorFilter): Promise<OperatorPage> {
    const bounds = keysetBounds(f);
    const params = {
      now: f.now,
      skill: f.skill ?? null,
      owner: f.owner ?? null,
      state: f.state ?? null,
      created_after: f.createdAfter ?? null,
      created_before: f.createdBefore ?? null,
      id_text: f.idContains || null,
      updated_after: f.updatedAfter ?? null,
      updated_before: f.updatedBefore ?? null,
      lower: bounds.after,
      upper_at: bounds.upperAt,
      upper_id: bounds.upperId,
      limit: f.pageSize + 1,
    };
    const order = orderOf(f);
    const statement =
      order === 'createdAt'
        ? this.#q.listByCreation
        : f.owner !== undefined
          ? this.#q.listByOwner
          : f.state !== undefined
            ? this.#q.listByState
            : this.#q.listAll;
    return toOperatorPage(statement.all(params) as TaskRow[], f.pageSize, order);
  }

  async countTasksByState(): Promise<Partial<Record<TaskState, number>>> {
    const rows = this.#q.countByState.all() as { state: TaskState; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  async listAttempts(taskId: string, limit: number): Promise<DeliveryAttempt[]> {
    return (this.#q.listAttempts.all(taskId, limit) as AttemptRow[]).map(toAttempt);
  }

  async listOutbox(taskId: string): Promise<OutboxEntry[]> {
    return (this.#q.listOutbox.all(taskId) as OutboxRow[]).map(toOutboxEntry);
  }

  async redeliver(key: NotificationKey, now: number): Promise<boolean> {
    return this.#run(
      () =>
        this.#q.redeliver.run({ task_id: key.taskId, config_id: key.configId, seq: key.seq, now }).changes >
        0,
    );
  }

  async recentActivity(since: number, limit: number): Promise<RecentActivity> {
    const tasks = [
      ...(this.#q.recentTasks.all({ since, limit }) as ActivityRow[]),
      ...(this.#q.queuedBefore.all({ since, limit }) as ActivityRow[]),
    ].map(toActivity) satisfies ActivityTask[];
    const attempts = this.#q.recentAttempts.all(since) as {
      minute: number;
      outcome: AttemptOutcome;
      count: number;
    }[];
    return { tasks, attempts };
  }

  /** Inside the settle's transaction: the attempt is kept with its outcome, or neither. */
  recordAttempt(key: NotificationKey, outcome: DeliveryOutcome, attempt: AttemptRecord): void {
    this.#q.insertAttempt.run({
      task_id: key.taskId,
      config_id: key.configId,
      seq: key.seq,
      attempt: attempt.attempt,
      at: attempt.at,
      duration_ms: attempt.durationMs,
      status: attempt.status ?? null,
      outcome: outcome.kind,
      error: outcome.kind === 'delivered' ? null : outcome.error,
    });
    this.#q.trimAttempts.run({ task_id: key.taskId });
  }

  /** Inside the sweep's transaction: a task's attempts go with it. */
  deleteAttempts(taskId: string): void {
    this.#q.deleteAttempts.run(taskId);
  }
}
