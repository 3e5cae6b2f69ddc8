import type Database from 'better-sqlite3';
import type { SkillFilter } from '../../engine/store-port.js';

const LIST_WHERE = `owner = @owner AND expires_at > @now
  AND (@context_id IS NULL OR context_id = @context_id)
  AND (@state IS NULL OR state = @state)
  AND (@after IS NULL OR updated_at > @after)`;

/** A queued task's owner's tasks before it in queue order (the claim's: queue_at, then id). */
const AHEAD = `state = 'submitted' AND owner = @owner AND (queue_at, id) < (@queue_at, @id) AND expires_at > @now`;

/** A claim's skill filter (store-port.ts SkillFilter): @only and @except are JSON lists, or NULL. */
const SKILL_PASSES = `(@only IS NULL OR skill IN (SELECT value FROM json_each(@only)))
  AND (@except IS NULL OR skill NOT IN (SELECT value FROM json_each(@except)))`;

/**
 * The named parameters of {@link SKILL_PASSES} for a claim's filter; undefined for none, read by the
 * statements without it (`...AnySkill`): SQLite opens both json_each lists on every run of a
 * statement that names them, NULL or not, 38 µs a read measured on an empty queue.
 */
export function skillParams(
  filter: SkillFilter | undefined,
): { only: string | null; except: string | null } | undefined {
  if (!filter) return undefined;
  return {
    only: 'only' in filter ? JSON.stringify(filter.only) : null,
    except: 'except' in filter ? JSON.stringify(filter.except) : null,
  };
}

/** A claim's orphans (expired leases), oldest lease first, with the skill filter or without. */
const claimableOrphans = (filtered: boolean) => `SELECT id, state FROM tasks INDEXED BY tasks_leased
    WHERE state = 'working' AND lease_expires_at < @now AND expires_at > @now${filtered ? ` AND ${SKILL_PASSES}` : ''}
    ORDER BY lease_expires_at LIMIT @limit`;

/** The first runnable tasks of an owner's queue, with the skill filter or without. */
const ownerQueue = (
  filtered: boolean,
) => `SELECT id, owner, tenant, skill, created_at FROM tasks INDEXED BY tasks_queue_by_owner
    WHERE state = 'submitted' AND owner = @owner AND expires_at > @now AND run_after <= @now${filtered ? ` AND ${SKILL_PASSES}` : ''}
    ORDER BY queue_at, id LIMIT @limit`;

const SQL = {
  // No RETURNING: the store builds the new row itself (newTaskRow). SQLite's RETURNING was measured
  // at about 55 µs an insert here (a create's largest single cost), the insert alone at 30.
  insertTask: `INSERT INTO tasks (id, context_id, owner, skill, state, input, metadata, created_at, updated_at,
      expires_at, ttl_ms, poll_interval_ms, last_seq, tenant, priority, queue_at, trace_parent, trace_state)
    VALUES (@id, @context_id, @owner, @skill, @state, @input, @metadata, @created_at, @updated_at,
      @expires_at, @ttl_ms, @poll_interval_ms, @last_seq, @tenant, @priority, @queue_at, @trace_parent, @trace_state)`,
  insertEvent: 'INSERT INTO events (task_id, seq, kind, at, payload) VALUES (?, ?, ?, ?, ?)',
  insertMessageId: 'INSERT INTO message_ids (owner, message_id, task_id) VALUES (?, ?, ?)',
  forgetMessageId: 'DELETE FROM message_ids WHERE owner = ? AND message_id = ?',
  findByMessageId: `SELECT t.* FROM message_ids m JOIN tasks t ON t.id = m.task_id
    WHERE m.owner = ? AND m.message_id = ?`,
  getTask: 'SELECT * FROM tasks WHERE id = ? AND expires_at > ?',
  getOwnTask: 'SELECT * FROM tasks WHERE id = ? AND expires_at > ? AND owner = ?',
  insertBlobPiece: 'INSERT INTO blob_pieces (task_id, seq, part, piece, data) VALUES (?, ?, ?, ?, ?)',
  readBlobPiece: 'SELECT data FROM blob_pieces WHERE task_id = ? AND seq = ? AND part = ? AND piece = ?',
  // The owner's new total comes back: the write checks its quota against it (and rolls back past it).
  addStoredBytes: `INSERT INTO owner_usage (owner, bytes) VALUES (?, ?)
    ON CONFLICT (owner) DO UPDATE SET bytes = max(0, bytes + excluded.bytes) RETURNING bytes`,
  deleteBlobPieces: 'DELETE FROM blob_pieces WHERE task_id = ?',
  deleteEventBlobPieces: 'DELETE FROM blob_pieces WHERE task_id = ? AND seq = ?',
  getTaskStamp: `SELECT owner, state, last_seq, updated_at, skill, poll_interval_ms, run_after, tenant, queue_at
    FROM tasks WHERE id = ? AND expires_at > ?`,
  // Counts at most @limit rows: the cost follows the limit, not the owner's history.
  // Whether the owner has @limit unfinished tasks: a row only when it does. Stepping over index
  // entries (OFFSET) costs about half of counting them through a subquery (270 vs 475 µs at 10,000).
  atActiveLimit: `SELECT 1 AS full FROM tasks WHERE owner = @owner
      AND state IN ('submitted', 'working', 'input-required', 'auth-required') AND expires_at > @now
      LIMIT 1 OFFSET @limit - 1`,
  // How many unfinished tasks the owner has, counted up to @limit.
  countActive: `SELECT count(*) AS n FROM (SELECT 1 FROM tasks WHERE owner = @owner
      AND state IN ('submitted', 'working', 'input-required', 'auth-required') AND expires_at > @now
      LIMIT @limit)`,
  // The partial index of the owner's unfinished tasks with webhooks (its terms repeated exactly):
  // the cost follows the tasks that have webhooks, not all the owner's unfinished ones.
  countActivePushConfigs: `SELECT coalesce(sum(push_configs), 0) AS n FROM tasks WHERE owner = ?
      AND push_configs > 0 AND state IN ('submitted', 'working', 'input-required', 'auth-required')
      AND expires_at > ?`,
  // One guarded statement per write: state, lease and event counter move together or not at all.
  guardedUpdate: `UPDATE tasks SET
      state = COALESCE(@to, state),
      status_message = CASE WHEN @to IS NULL THEN status_message ELSE @status_message END,
      progress = COALESCE(@progress, progress),
      poll_interval_ms = COALESCE(@poll_interval_ms, poll_interval_ms),
      updated_at = @at,
      last_seq = last_seq + @n,
      stored_bytes = stored_bytes + @stored_bytes,
      approvers = CASE WHEN @to IS NULL THEN approvers ELSE @approvers END,
      input_deadline = CASE WHEN @to IS NULL THEN input_deadline ELSE @input_deadline END,
      lease_owner = CASE WHEN @release = 1 THEN NULL ELSE lease_owner END,
      lease_token = CASE WHEN @release = 1 THEN NULL ELSE lease_token END,
      lease_expires_at = CASE WHEN @release = 1 THEN NULL ELSE lease_expires_at END,
      run_after = COALESCE(@run_after, run_after),
      retries = retries + CASE WHEN @retry_reason IS NULL THEN 0 ELSE 1 END,
      retry_reasons = CASE WHEN @retry_reason IS NULL THEN retry_reasons
        ELSE json_insert(COALESCE(retry_reasons, '[]'), '$[#]', @retry_reason) END
    WHERE id = @id AND state IN (SELECT value FROM json_each(@from))
      AND (@lease_token IS NULL OR lease_token = @lease_token)
      AND (@approver IS NULL OR EXISTS (SELECT 1 FROM json_each(tasks.approvers) WHERE value = @approver))
      AND (@generation IS NULL OR last_seq = @generation)
    RETURNING *`,
  viewEvents: "SELECT seq, at, payload FROM events WHERE task_id = ? AND kind <> 'progress' ORDER BY seq",
  readEvents: 'SELECT seq, at, payload FROM events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  listTasks: `SELECT * FROM tasks WHERE ${LIST_WHERE}
      AND (@cursor_at IS NULL OR updated_at < @cursor_at OR (updated_at = @cursor_at AND id < @cursor_id))
    ORDER BY updated_at DESC, id DESC LIMIT @limit`,
  countTasks: `SELECT count(*) AS total FROM tasks WHERE ${LIST_WHERE}`,
  // An expired task is gone for callers: running it would be wasted work that nobody can see.
  // Each on its own partial index (migration 3): the cost follows the active tasks, not the stored
  // ones. INDEXED BY, here and in the claim's reads below: without statistics (a new database, one
  // never analyzed with tasks queued) the planner took tasks_by_state and sorted every queued or
  // working task for each claim, 35 ms a claim beside 20,000 queued where the index makes it 2.
  claimableOrphans: claimableOrphans(true),
  claimableOrphansAnySkill: claimableOrphans(false),
  // The fair claim's reads (engine/fair-share.ts), on the partial indexes of migration 12: the
  // owners with queued tasks one index seek each, the first tasks of each owner's queue, and the
  // running tasks counted by tenant, owner and skill.
  queuedOwnerAfter: `SELECT owner FROM tasks INDEXED BY tasks_queue_by_owner WHERE state = 'submitted' AND owner > ?
    ORDER BY owner LIMIT 1`,
  ownerQueue: ownerQueue(true),
  ownerQueueAnySkill: ownerQueue(false),
  // Where a queued task stands: its owner's tasks before it (at most @cap of them; from the index
  // alone, migration 13), and the running, in one statement. The tasks ahead are found by stepping
  // back @cap entries from the task (OFFSET, in the index's order) and counted only when fewer are
  // there: measured beside 3,000 queued, 20 µs for both counts where a count(*) over a LIMIT
  // subquery and a statement of its own for the running took 37 (a create and a poll each pay it).
  queueCounts: `SELECT CASE WHEN EXISTS (SELECT 1 FROM tasks WHERE ${AHEAD} ORDER BY queue_at DESC, id DESC
        LIMIT 1 OFFSET @cap - 1)
      THEN @cap ELSE (SELECT count(*) FROM tasks WHERE ${AHEAD}) END AS ahead,
      r.tenant_running, r.skill_running, r.running
    FROM (SELECT coalesce(sum(tenant = @tenant), 0) AS tenant_running,
      coalesce(sum(skill = @skill), 0) AS skill_running, count(*) AS running
      FROM tasks WHERE state = 'working' AND expires_at > @now) r`,
  // A list page's queued tasks' places: the head of the owner's queue, once per page (page-standing.ts).
  queueHead: `SELECT id FROM tasks WHERE state = 'submitted' AND owner = @owner AND expires_at > @now
    ORDER BY queue_at, id LIMIT @cap`,
  turnOf: 'SELECT last_at FROM scheduler_turns WHERE key = ?',
  forgetTurns: 'DELETE FROM scheduler_turns WHERE last_at < ?',
  setTurn: `INSERT INTO scheduler_turns (key, last_at) VALUES (?, ?)
    ON CONFLICT (key) DO UPDATE SET last_at = max(last_at, excluded.last_at)`,
  running: `SELECT tenant, owner, skill, count(*) AS n FROM tasks INDEXED BY tasks_running
    WHERE state = 'working' AND expires_at > @now GROUP BY tenant, owner, skill`,
  claim: `UPDATE tasks SET
      lease_owner = @worker, lease_token = @token, lease_expires_at = @until, attempts = attempts + 1,
      -- a released lease (0) was a graceful shutdown; an expired one means its runner died
      interruptions = interruptions + CASE WHEN @to_working = 0 AND lease_expires_at > 0 THEN 1 ELSE 0 END,
      state = CASE WHEN @to_working = 1 THEN 'working' ELSE state END,
      status_message = CASE WHEN @to_working = 1 THEN NULL ELSE status_message END,
      updated_at = CASE WHEN @to_working = 1 THEN @now ELSE updated_at END,
      last_seq = last_seq + @to_working
    WHERE id = @id AND state = @state AND (lease_expires_at IS NULL OR lease_expires_at < @now)
      AND expires_at > @now
    RETURNING *`,
  renewLease: `UPDATE tasks SET lease_expires_at = @until
    WHERE id = @id AND lease_token = @token AND state = 'working' AND expires_at > @now
    RETURNING cancel_requested`,
  releaseLease: `UPDATE tasks SET lease_owner = NULL, lease_token = NULL, lease_expires_at = 0
    WHERE id = ? AND lease_token = ?`,
  requestCancel: `UPDATE tasks SET cancel_requested = 1
    WHERE id = @id AND (@generation IS NULL OR last_seq = @generation)`,
  expired: 'SELECT id, owner, stored_bytes FROM tasks WHERE expires_at <= ? LIMIT ?',
  waiting: `SELECT * FROM tasks WHERE state = 'input-required' AND expires_at > @now
      AND (owner = @owner OR (@name IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(tasks.approvers) WHERE value = @name)))
    ORDER BY updated_at LIMIT @limit`,
  // The sweep of unanswered questions, on its partial index (as the claim's reads, INDEXED BY).
  overdueInputs: `SELECT * FROM tasks INDEXED BY tasks_input_deadline
    WHERE state = 'input-required' AND input_deadline <= @now
    ORDER BY input_deadline LIMIT @limit`,
  deleteEvents: 'DELETE FROM events WHERE task_id = ?',
  deleteMessageIds: 'DELETE FROM message_ids WHERE task_id = ?',
  deleteTask: 'DELETE FROM tasks WHERE id = ?',
  deletePushConfigs: 'DELETE FROM push_configs WHERE task_id = ?',
  deleteNotifications: 'DELETE FROM push_outbox WHERE task_id = ?',
  putPushConfig: `INSERT INTO push_configs
      (task_id, id, url, token, auth_scheme, auth_credentials, all_events, format, created_at)
    VALUES (@task_id, @id, @url, @token, @auth_scheme, @auth_credentials, @all_events, @format, @created_at)
    ON CONFLICT (task_id, id) DO UPDATE SET url = excluded.url, token = excluded.token,
      auth_scheme = excluded.auth_scheme, auth_credentials = excluded.auth_credentials,
      all_events = excluded.all_events, format = excluded.format, created_at = excluded.created_at`,
  getPushConfig: 'SELECT * FROM push_configs WHERE task_id = ? AND id = ?',
  taskPushConfigs: 'SELECT push_configs FROM tasks WHERE id = ?',
  listPushConfigs: 'SELECT * FROM push_configs WHERE task_id = ? ORDER BY created_at, id',
  deletePushConfig: 'DELETE FROM push_configs WHERE task_id = ? AND id = ?',
  deleteConfigNotifications:
    'DELETE FROM push_outbox WHERE task_id = ? AND config_id = ? AND dead_at IS NULL',
  countPushConfigs: `UPDATE tasks SET push_configs = (SELECT count(*) FROM push_configs WHERE task_id = @id)
    WHERE id = @id RETURNING push_configs`,
  // The event's notifications, in the transaction that logs it.
  queueNotifications: `INSERT INTO push_outbox (task_id, config_id, seq, created_at, next_attempt_at)
    SELECT task_id, id, @seq, @at, @at FROM push_configs
    WHERE task_id = @task_id AND (all_events = 1 OR @notable = 1)`,
  // Head of line per webhook: a notification is due only when no older one of its (task, config)
  // is still undelivered; dead letters do not block the ones after them.
  dueNotifications: `SELECT o.task_id, o.config_id, o.seq, o.created_at AS n_created_at, o.attempts, c.*
    FROM push_outbox o JOIN push_configs c ON c.task_id = o.task_id AND c.id = o.config_id
    WHERE o.dead_at IS NULL AND o.next_attempt_at <= @now AND o.leased_until <= @now
      AND NOT EXISTS (SELECT 1 FROM push_outbox p WHERE p.task_id = o.task_id
        AND p.config_id = o.config_id AND p.seq < o.seq AND p.dead_at IS NULL)
    ORDER BY o.next_attempt_at LIMIT @limit`,
  leaseNotification: `UPDATE push_outbox SET leased_until = @until, attempts = attempts + 1
    WHERE task_id = @task_id AND config_id = @config_id AND seq = @seq`,
  deliveredNotification: 'DELETE FROM push_outbox WHERE task_id = ? AND config_id = ? AND seq = ?',
  retryNotification: `UPDATE push_outbox SET next_attempt_at = @at, leased_until = 0, last_error = @error
    WHERE task_id = @task_id AND config_id = @config_id AND seq = @seq`,
  deadNotification: `UPDATE push_outbox SET dead_at = @at, leased_until = 0, last_error = @error
    WHERE task_id = @task_id AND config_id = @config_id AND seq = @seq`,
  ping: 'SELECT 1',
} as const;

export type Statements = { [K in keyof typeof SQL]: Database.Statement };

/** Prepares every statement once, at open: requests never parse SQL. */
export function prepareStatements(db: Database.Database): Statements {
  return Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)])) as Statements;
}
