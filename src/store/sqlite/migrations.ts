import type Database from 'better-sqlite3';
import { TASK_STATES } from '../../engine/task.js';
import { refuseNewerSchema } from '../schema-version.js';

/** Versioned schema changes, applied in order, each in its own transaction. Never edit a shipped one. */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'tasks, event log, message ids',
    sql: `
CREATE TABLE tasks (
  id               TEXT PRIMARY KEY,
  context_id       TEXT NOT NULL,
  owner            TEXT NOT NULL,
  skill            TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN (${TASK_STATES.map((s) => `'${s}'`).join(', ')})),
  status_message   TEXT,
  input            TEXT,
  metadata         TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  expires_at       INTEGER NOT NULL,
  ttl_ms           INTEGER NOT NULL,
  poll_interval_ms INTEGER NOT NULL,
  progress         TEXT,
  last_seq         INTEGER NOT NULL DEFAULT 0,
  attempts         INTEGER NOT NULL DEFAULT 0,
  lease_owner      TEXT,
  lease_token      TEXT,
  lease_expires_at INTEGER,
  cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tasks_by_owner ON tasks (owner, updated_at DESC, id DESC);
CREATE INDEX tasks_queue ON tasks (state, lease_expires_at, created_at) WHERE state IN ('submitted', 'working');
CREATE INDEX tasks_by_expiry ON tasks (expires_at);

CREATE TABLE events (
  task_id TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  kind    TEXT NOT NULL CHECK (kind IN ('status', 'progress', 'artifact', 'message')),
  at      INTEGER NOT NULL,
  payload TEXT NOT NULL,
  PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;

CREATE TABLE message_ids (
  owner      TEXT NOT NULL,
  message_id TEXT NOT NULL,
  task_id    TEXT NOT NULL,
  PRIMARY KEY (owner, message_id)
) WITHOUT ROWID;
CREATE INDEX message_ids_by_task ON message_ids (task_id);
`,
  },
  {
    version: 2,
    name: 'count crashes separately from graceful releases',
    sql: 'ALTER TABLE tasks ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0;',
  },
  {
    version: 3,
    name: 'claim indexes that hold only active tasks',
    // SQLite cannot use the old IN-list partial index for `state = ?`: claims scanned every task.
    sql: `
DROP INDEX tasks_queue;
CREATE INDEX tasks_queued ON tasks (created_at) WHERE state = 'submitted';
CREATE INDEX tasks_leased ON tasks (lease_expires_at) WHERE state = 'working';
`,
  },
  {
    version: 4,
    name: 'push notification configs and their durable outbox',
    sql: `
ALTER TABLE tasks ADD COLUMN push_configs INTEGER NOT NULL DEFAULT 0;

CREATE TABLE push_configs (
  task_id        TEXT NOT NULL,
  id             TEXT NOT NULL,
  url            TEXT NOT NULL,
  token          TEXT,
  auth_scheme    TEXT,
  auth_credentials TEXT,
  all_events     INTEGER NOT NULL,
  format         TEXT NOT NULL,
  created_at     INTEGER NOT NULL,
  PRIMARY KEY (task_id, id)
) WITHOUT ROWID;

-- One row per notification still to deliver (or dead-lettered): written in the transaction of the
-- event it announces, deleted once delivered.
CREATE TABLE push_outbox (
  task_id         TEXT NOT NULL,
  config_id       TEXT NOT NULL,
  seq             INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  next_attempt_at INTEGER NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  leased_until    INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,
  dead_at         INTEGER,
  PRIMARY KEY (task_id, config_id, seq)
) WITHOUT ROWID;
CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at) WHERE dead_at IS NULL;
`,
  },
  {
    version: 5,
    name: 'unfinished tasks by owner, for the per-principal limit',
    // The same IN list as the count statement: SQLite uses a partial index only for that exact term.
    sql: `CREATE INDEX tasks_active_by_owner ON tasks (owner)
      WHERE state IN ('submitted', 'working', 'input-required', 'auth-required');`,
  },
  {
    version: 6,
    name: 'who may answer a waiting task, and until when',
    sql: `
ALTER TABLE tasks ADD COLUMN approvers TEXT;
ALTER TABLE tasks ADD COLUMN input_deadline INTEGER;
CREATE INDEX tasks_input_deadline ON tasks (input_deadline) WHERE state = 'input-required';
`,
  },
  {
    version: 7,
    name: 'tasks waiting for input, for the approvals inbox',
    sql: "CREATE INDEX tasks_waiting ON tasks (updated_at) WHERE state = 'input-required';",
  },
  {
    version: 8,
    name: 'large artifacts stored beside the log, and the artifact bytes each owner stores',
    // A rowid table: SQLite keeps large values best out of a WITHOUT ROWID b-tree.
    sql: `
ALTER TABLE tasks ADD COLUMN stored_bytes INTEGER NOT NULL DEFAULT 0;
CREATE TABLE blob_pieces (
  task_id TEXT NOT NULL,
  seq     INTEGER NOT NULL,
  part    INTEGER NOT NULL,
  piece   INTEGER NOT NULL,
  data    BLOB NOT NULL,
  PRIMARY KEY (task_id, seq, part, piece)
);
CREATE TABLE owner_usage (
  owner TEXT PRIMARY KEY,
  bytes INTEGER NOT NULL
) WITHOUT ROWID;
`,
  },
  {
    version: 9,
    name: 'the creating span of a task (W3C trace context), which its job runs link to',
    sql: `
ALTER TABLE tasks ADD COLUMN trace_parent TEXT;
ALTER TABLE tasks ADD COLUMN trace_state TEXT;
`,
  },
  {
    version: 10,
    name: 'every task by time and by state, and webhook delivery attempts, for the operator console',
    // Keyset pages over (updated_at, id): a deep page of a million tasks costs what the first does.
    sql: `
CREATE INDEX tasks_by_update ON tasks (updated_at, id);
CREATE INDEX tasks_by_state ON tasks (state, updated_at, id);
-- Created ranges walk this one (created_at never changes: only inserts write it).
CREATE INDEX tasks_by_creation ON tasks (created_at, id);
CREATE TABLE push_attempts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id     TEXT NOT NULL,
  config_id   TEXT NOT NULL,
  seq         INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  at          INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  status      INTEGER,
  outcome     TEXT NOT NULL CHECK (outcome IN ('delivered', 'retry', 'dead')),
  error       TEXT
);
CREATE INDEX push_attempts_by_task ON push_attempts (task_id, id);
CREATE INDEX push_attempts_by_time ON push_attempts (at);
`,
  },
  {
    version: 12,
    name: 'fair claims: tenant, priority and queue order, retry backoff',
    // Existing rows: queue_at 0 (queued before this version: first in their owner's queue); the
    // active ones get their tenant from the owner key ("via:tenant/principal", auth/principal.ts).
    sql: `
ALTER TABLE tasks ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN queue_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN run_after INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN retries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN retry_reasons TEXT;
UPDATE tasks SET tenant = CASE WHEN instr(owner, '/') > 0 THEN substr(owner, 1, instr(owner, '/') - 1)
    ELSE owner END
  WHERE state IN ('submitted', 'working', 'input-required', 'auth-required');
CREATE INDEX tasks_queue_by_owner ON tasks (owner, queue_at) WHERE state = 'submitted';
CREATE INDEX tasks_running ON tasks (tenant, owner, skill) WHERE state = 'working';
-- When each tenant ('t:' key) and owner ('o:' key) last got a slot: ties of the fair share go to
-- the one served least recently.
CREATE TABLE scheduler_turns (
  key     TEXT PRIMARY KEY,
  last_at INTEGER NOT NULL
) WITHOUT ROWID;
`,
  },
  {
    version: 13,
    name: "a queued task's place counted from its owner's queue index alone",
    // The count of tasks ahead (queueAhead) read each of up to 250 rows for its id and expiry; with
    // both in the index it reads index entries only, a few pages instead of one page per task.
    sql: `
DROP INDEX tasks_queue_by_owner;
CREATE INDEX tasks_queue_by_owner ON tasks (owner, queue_at, id, expires_at) WHERE state = 'submitted';
`,
  },
  {
    version: 14,
    name: "the per-principal bounds' counts from their indexes alone",
    // Both counts read each of the owner's unfinished tasks' rows for its expiry (and webhooks): at
    // MAX_ACTIVE_TASKS (10,000) about 0.5 ms a count, held inside the write transaction for a create
    // and on the event loop for a webhook, each time a key at its bound retried (the flood bench).
    // With the expiry in the index they read index entries only; the webhooks' count reads only
    // the owner's tasks that have webhooks. The WHERE terms are the count statements' own: SQLite
    // uses a partial index only for those exact terms.
    sql: `
DROP INDEX tasks_active_by_owner;
CREATE INDEX tasks_active_by_owner ON tasks (owner, expires_at)
  WHERE state IN ('submitted', 'working', 'input-required', 'auth-required');
CREATE INDEX tasks_with_push_by_owner ON tasks (owner, expires_at, push_configs)
  WHERE push_configs > 0 AND state IN ('submitted', 'working', 'input-required', 'auth-required');
`,
  },
];

/** Applies the migrations this database has not seen yet, in order. */
export function migrate(db: Database.Database): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at INTEGER)',
  );
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
      (r) => r.version,
    ),
  );
  refuseNewerSchema(applied, MIGRATIONS, `database ${db.name}`);
  for (const m of MIGRATIONS) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        Date.now(),
      );
    })();
  }
}
