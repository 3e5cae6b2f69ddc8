import type pg from 'pg';
import { TASK_STATES } from '../../engine/task.js';
import { refuseNewerSchema } from '../schema-version.js';

/**
 * Versioned schema changes, applied in order, each in its own transaction. Never edit a shipped one.
 * The schema mirrors SQLite's (JSON as text, flags as 0/1) so both adapters share one row mapping;
 * times are Unix milliseconds in bigint columns.
 */
export const MIGRATIONS: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'tasks, event log, message ids, push configs and outbox',
    sql: `
CREATE TABLE tasks (
  id               text PRIMARY KEY,
  context_id       text NOT NULL,
  owner            text NOT NULL,
  skill            text NOT NULL,
  state            text NOT NULL CHECK (state IN (${TASK_STATES.map((s) => `'${s}'`).join(', ')})),
  status_message   text,
  input            text,
  metadata         text,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  expires_at       bigint NOT NULL,
  ttl_ms           bigint NOT NULL,
  poll_interval_ms integer NOT NULL,
  progress         text,
  last_seq         integer NOT NULL DEFAULT 0,
  attempts         integer NOT NULL DEFAULT 0,
  interruptions    integer NOT NULL DEFAULT 0,
  lease_owner      text,
  lease_token      text,
  lease_expires_at bigint,
  cancel_requested smallint NOT NULL DEFAULT 0,
  push_configs     integer NOT NULL DEFAULT 0,
  approvers        text,
  input_deadline   bigint
);
CREATE INDEX tasks_by_owner ON tasks (owner, updated_at DESC, id DESC);
CREATE INDEX tasks_by_expiry ON tasks (expires_at);
-- The claim queries' own partial indexes: their cost follows the active tasks, not the stored ones.
CREATE INDEX tasks_queued ON tasks (created_at) WHERE state = 'submitted';
CREATE INDEX tasks_leased ON tasks (lease_expires_at) WHERE state = 'working';
CREATE INDEX tasks_active_by_owner ON tasks (owner)
  WHERE state IN ('submitted', 'working', 'input-required', 'auth-required');
CREATE INDEX tasks_input_deadline ON tasks (input_deadline) WHERE state = 'input-required';
CREATE INDEX tasks_waiting ON tasks (updated_at) WHERE state = 'input-required';

CREATE TABLE events (
  task_id text NOT NULL,
  seq     integer NOT NULL,
  kind    text NOT NULL CHECK (kind IN ('status', 'progress', 'artifact', 'message')),
  at      bigint NOT NULL,
  payload text NOT NULL,
  PRIMARY KEY (task_id, seq)
);

CREATE TABLE message_ids (
  owner      text NOT NULL,
  message_id text NOT NULL,
  task_id    text NOT NULL,
  PRIMARY KEY (owner, message_id)
);
CREATE INDEX message_ids_by_task ON message_ids (task_id);

CREATE TABLE push_configs (
  task_id          text NOT NULL,
  id               text NOT NULL,
  url              text NOT NULL,
  token            text,
  auth_scheme      text,
  auth_credentials text,
  all_events       smallint NOT NULL,
  format           text NOT NULL,
  created_at       bigint NOT NULL,
  PRIMARY KEY (task_id, id)
);

-- One row per notification still to deliver (or dead-lettered): written in the statement that logs
-- the event it announces, deleted once delivered.
CREATE TABLE push_outbox (
  task_id         text NOT NULL,
  config_id       text NOT NULL,
  seq             integer NOT NULL,
  created_at      bigint NOT NULL,
  next_attempt_at bigint NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  leased_until    bigint NOT NULL DEFAULT 0,
  last_error      text,
  dead_at         bigint,
  PRIMARY KEY (task_id, config_id, seq)
);
CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at) WHERE dead_at IS NULL;
`,
  },
  {
    version: 2,
    name: 'large artifacts stored beside the log, and the artifact bytes each owner stores',
    sql: `
ALTER TABLE tasks ADD COLUMN stored_bytes bigint NOT NULL DEFAULT 0;
CREATE TABLE blob_pieces (
  task_id text NOT NULL,
  seq     integer NOT NULL,
  part    integer NOT NULL,
  piece   integer NOT NULL,
  data    bytea NOT NULL,
  PRIMARY KEY (task_id, seq, part, piece)
);
CREATE TABLE owner_usage (
  owner text PRIMARY KEY,
  bytes bigint NOT NULL
);
`,
  },
  {
    version: 3,
    name: 'the creating span of a task (W3C trace context), which its job runs link to',
    sql: `
ALTER TABLE tasks ADD COLUMN trace_parent text;
ALTER TABLE tasks ADD COLUMN trace_state text;
`,
  },
  {
    version: 4,
    name: 'every task by time and by state, and webhook delivery attempts, for the operator console',
    // Keyset pages over (updated_at, id): a deep page of a million tasks costs what the first does.
    sql: `
CREATE INDEX tasks_by_update ON tasks (updated_at, id);
CREATE INDEX tasks_by_state ON tasks (state, updated_at, id);
-- Created ranges walk this one (created_at never changes: only inserts write it).
CREATE INDEX tasks_by_creation ON tasks (created_at, id);
CREATE TABLE push_attempts (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id     text NOT NULL,
  config_id   text NOT NULL,
  seq         integer NOT NULL,
  attempt     integer NOT NULL,
  at          bigint NOT NULL,
  duration_ms integer NOT NULL,
  status      integer,
  outcome     text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'dead')),
  error       text
);
CREATE INDEX push_attempts_by_task ON push_attempts (task_id, id);
CREATE INDEX push_attempts_by_time ON push_attempts (at);
`,
  },
  {
    version: 6,
    name: 'fair claims: tenant, priority and queue order, retry backoff',
    // Existing rows: queue_at 0 (queued before this version: first in their owner's queue); the
    // active ones get their tenant from the owner key ("via:tenant/principal", auth/principal.ts).
    sql: `
ALTER TABLE tasks ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN priority integer NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN queue_at bigint NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN run_after bigint NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN retries integer NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN retry_reasons text;
UPDATE tasks SET tenant = split_part(owner, '/', 1)
  WHERE state IN ('submitted', 'working', 'input-required', 'auth-required');
CREATE INDEX tasks_queue_by_owner ON tasks (owner, queue_at) WHERE state = 'submitted';
CREATE INDEX tasks_running ON tasks (tenant, owner, skill) WHERE state = 'working';
-- When each tenant ('t:' key) and owner ('o:' key) last got a slot: ties of the fair share go to
-- the one served least recently.
CREATE TABLE scheduler_turns (
  key     text PRIMARY KEY,
  last_at bigint NOT NULL
);
`,
  },
  {
    version: 7,
    name: "a queued task's place counted from its owner's queue index",
    // The count of tasks ahead bounds its scan by (queue_at, id) and finds each entry's expiry in
    // the index: heap pages are read only where the visibility map cannot vouch for them.
    sql: `
DROP INDEX tasks_queue_by_owner;
CREATE INDEX tasks_queue_by_owner ON tasks (owner, queue_at, id) INCLUDE (expires_at) WHERE state = 'submitted';
`,
  },
  {
    version: 8,
    name: "the per-principal bounds' counts from their indexes",
    // Both counts read each of the owner's unfinished tasks' rows for its expiry (and webhooks), up
    // to MAX_ACTIVE_TASKS of them, each time a key at its bound retried; with the expiry in the
    // index they can be index-only scans, and the webhooks' count reads only tasks that have some.
    sql: `
DROP INDEX tasks_active_by_owner;
CREATE INDEX tasks_active_by_owner ON tasks (owner, expires_at)
  WHERE state IN ('submitted', 'working', 'input-required', 'auth-required');
CREATE INDEX tasks_with_push_by_owner ON tasks (owner, expires_at) INCLUDE (push_configs)
  WHERE push_configs > 0 AND state IN ('submitted', 'working', 'input-required', 'auth-required');
`,
  },
  {
    version: 9,
    name: "a write's artifact bytes checked against the quota in the write's own statement",
    // A write that stored artifact bytes was a transaction of four round trips (BEGIN, the write,
    // the owner's new total, COMMIT) so that one past the quota could roll back; raised from within
    // the statement, the refusal undoes it as well, in one round trip. The new total goes in DETAIL.
    sql: `
CREATE FUNCTION refused_over_quota(total bigint, adding bigint, quota bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  IF quota > 0 AND adding > 0 AND total > quota THEN
    RAISE EXCEPTION 'storage quota exceeded' USING ERRCODE = 'THQ01', DETAIL = total::text;
  END IF;
  RETURN total;
END
$$;
`,
  },
];

/**
 * Creates the schema if needed and applies the migrations it has not seen, under an advisory lock:
 * instances that start together wait for each other instead of racing to create the same tables.
 */
export async function migrate(client: pg.ClientBase, schema: string): Promise<void> {
  const quoted = quoteIdent(schema);
  // Session-level, keyed by the schema: two clusters in one database migrate independently.
  await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`taskhandle.migrate.${schema}`]);
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${quoted}.schema_migrations
        (version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`,
    );
    const { rows } = await client.query<{ version: number }>(
      `SELECT version FROM ${quoted}.schema_migrations`,
    );
    const applied = new Set(rows.map((r) => r.version));
    refuseNewerSchema(applied, MIGRATIONS, `schema ${schema}`);
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(`SET LOCAL search_path TO ${quoted}`);
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          m.version,
          m.name,
          Date.now(),
        ]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [
      `taskhandle.migrate.${schema}`,
    ]);
  }
}

/** A schema name as a quoted SQL identifier (config allows only [A-Za-z0-9_], this is the second guard). */
export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
