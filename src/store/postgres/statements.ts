/**
 * Every statement of the PostgreSQL adapter. Each has a name, so each connection of the pool parses
 * and plans it once. Writes that belong together are one statement (data-modifying CTEs): one round
 * trip, one snapshot, atomic without an explicit transaction. `pg_notify` in RETURNING tells the
 * other instances, at commit and only if it commits, that a task's log grew.
 */

import { isTerminal, TASK_STATES } from '../../engine/task.js';

export interface Statement {
  name: string;
  text: string;
}

/**
 * BEGIN and the cluster's claim lock, as one simple query (one round trip; the lock is a statement
 * of its own so that the claim's reads, after it, see every claim committed before it). The schema
 * name is [a-z0-9_] (config): quoted as a literal all the same.
 */
export const beginClaim = (schema: string): string =>
  `BEGIN; SELECT pg_advisory_xact_lock(hashtextextended('taskhandle.claim.${schema.replaceAll("'", "''")}', 0))`;

const ACTIVE = "('submitted', 'working', 'input-required', 'auth-required')";
/** The states a task ends in, as an SQL list. */
const TERMINAL = `(${TASK_STATES.filter(isTerminal)
  .map((s) => `'${s}'`)
  .join(', ')})`;

/**
 * Not expired at `now` (of table alias `t`, '' for none), beside a condition an index serves (a
 * state's partial index, the owner's): the expiry is compared as an expression (`+ 0`) so that no
 * index of it drives the scan. Without statistics (a new schema, or autovacuum off) the planner
 * ANDed the bitmap of tasks_by_expiry, every stored task, to that index's few rows, and each read
 * then cost what the table holds (a count of running tasks: 0.65 ms at 50,000 tasks where it costs
 * 0.05, a fifth of PostgreSQL's CPU a create, by perf). Where the expiry is in the index that
 * serves the read (tasks_active_by_owner), it is compared as it is.
 */
const alive = (t: string, now: string) => `${t}expires_at + 0 > ${now}`;

/** The running tasks (of table alias `t`, '' for none): working and not expired at `now`. */
const running = (t: string, now: string) => `${t}state = 'working' AND ${alive(t, now)}`;

const LIST_WHERE = `owner = $1 AND ${alive('', '$2')}
  AND ($3::text IS NULL OR context_id = $3)
  AND ($4::text IS NULL OR state = $4)
  AND ($5::bigint IS NULL OR updated_at > $5)`;

/**
 * A queued task's owner's tasks before it in queue order (the claim's order: queue_at, then id),
 * counted up to `cap`; the arguments are SQL expressions. queueCounts and getTaskStamp count alike.
 */
const aheadCount = (id: string, owner: string, queueAt: string, now: string, cap: string) =>
  `(SELECT count(*)::int FROM (SELECT 1 FROM tasks a WHERE a.state = 'submitted' AND a.owner = ${owner}
      AND (a.queue_at, a.id) < (${queueAt}, ${id}) AND a.expires_at > ${now}
      LIMIT ${cap}) x)`;

/**
 * A task's log as one JSON array text (progress left out: no view shows it), in seq order; `id` is an
 * SQL expression. Built in the database: one value for the whole log, not one row per event.
 */
const logOf = (id: string) => `(SELECT '[' || string_agg(
        '{"seq":' || seq || ',"at":' || at || ',"event":' || payload || '}', ',' ORDER BY seq) || ']'
      FROM events WHERE task_id = ${id} AND kind <> 'progress')`;

/** The running tasks of a tenant, of a skill, and in all, as one int[] (see toQueueCounts). */
const runningCounts = (tenant: string, skill: string, now: string) =>
  `(SELECT ARRAY[count(*) FILTER (WHERE w.tenant = ${tenant}), count(*) FILTER (WHERE w.skill = ${skill}),
      count(*)]::int[] FROM tasks w WHERE ${running('w.', now)})`;

/**
 * A claim's skill filter (store-port.ts SkillFilter) on a task's `skill`: `only` and `except` are
 * text[] parameters, each NULL when not given (see skillLists).
 */
const skillPasses = (only: string, except: string, t = '') =>
  `(${only}::text[] IS NULL OR ${t}skill = ANY(${only}::text[]))
    AND (${except}::text[] IS NULL OR NOT (${t}skill = ANY(${except}::text[])))`;

/** The create statement (see `createTask` below), with its task's counts when `counted`. */
function createTaskSql(counted: boolean): string {
  return `WITH cnt AS (SELECT count(*)::int AS n FROM (SELECT 1 FROM tasks WHERE owner = $3::text
        AND state IN ${ACTIVE} AND expires_at > $7::bigint LIMIT COALESCE($14::int, 0)) a),
    m AS (INSERT INTO message_ids (owner, message_id, task_id)
      SELECT $3::text, $11::text, $1::text FROM cnt WHERE $14::int IS NULL OR cnt.n + $15::int < $14::int
      ON CONFLICT DO NOTHING RETURNING task_id),
    u AS (INSERT INTO tasks (id, context_id, owner, skill, state, input, metadata, created_at, updated_at,
        expires_at, ttl_ms, poll_interval_ms, last_seq, tenant, priority, queue_at, trace_parent, trace_state)
      SELECT $1::text, $2::text, $3::text, $4::text, 'submitted', $5::text, $6::text, $7::bigint, $7::bigint,
        $8::bigint, $9::bigint, $10::integer, cardinality($12::text[]), $16::text, $17::integer, $18::bigint,
        $19::text, $20::text
      FROM m
      RETURNING id),
    e AS (INSERT INTO events (task_id, seq, kind, at, payload)
      SELECT u.id, x.ord, x.kind, $7::bigint, x.payload
      FROM u, unnest($12::text[], $13::text[]) WITH ORDINALITY AS x(kind, payload, ord))
    SELECT cnt.n AS active, u.id${counted ? CREATED_COUNTS : ''} FROM cnt LEFT JOIN u ON true`;
}

/**
 * `unnest` of the array parameters $first.. (one per type), each read through a sub-select: the
 * planner then sizes them alike whatever their length (10 rows), so a plan made for a batch of 2
 * is no cheaper than the generic one, and the statement is planned once per connection instead of
 * at every execution (measured: planning the batch statement costs 0.8 ms, more than two creates).
 */
const unnestHidden = (first: number, types: string): string =>
  `unnest(${types
    .split(' ')
    .map((type, i) => `(SELECT $${first + i}::${type}[])`)
    .join(', ')})`;

/**
 * The creates of one turn in one statement (create-batch.ts): createTask's statement over arrays,
 * one element per create, with the webhooks given with their first messages. Per create: $1 id,
 * $2 context_id, $3 owner, $4 skill, $5 input, $6 metadata, $7 created_at, $8 expires_at, $9 ttl_ms,
 * $10 poll_interval_ms, $11 message_id, $12 the owner's limit (null: none), $13 tenant, $14 priority,
 * $15 queue_at, $16 trace_parent, $17 trace_state, $18 its events' count, $19 its webhooks' count,
 * $20 the ahead cap (null: not counted). $21 how far below its limit a create must stay (one for
 * the statement: it holds at most one create of an owner with a limit). Per event, the events of
 * every create in a row: $22 its create's position, $23 seq, $24 kind, $25 payload, $26 1 if webhooks
 * hear of it by default. Per webhook: $27 its create's position, $28..$35 push_configs' columns.
 * The message ids go in key order: two batches racing for the same ids wait for each other in one
 * order, never in a cycle; of two creates of a batch with the same id, the first made the task.
 * A task's standing counts the tasks of its owner before it that the same statement made; its
 * owner's first task of the batch is counted first (f), and when that one has the cap ahead
 * already, so has every later one (the usual case of a long queue: one count a batch, not one a task).
 */
function createTasksSql(): string {
  return `WITH r AS MATERIALIZED (SELECT * FROM ${unnestHidden(1, 'text text text text text text bigint bigint bigint int text int text int bigint text text int int int')}
      WITH ORDINALITY AS r(id, context_id, owner, skill, input, metadata, created_at, expires_at, ttl_ms,
        poll_interval_ms, message_id, max_active, tenant, priority, queue_at, trace_parent, trace_state,
        n_events, n_configs, cap, ord)),
    cnt AS MATERIALIZED (SELECT r.ord, CASE WHEN r.max_active IS NULL THEN 0 ELSE
        (SELECT count(*)::int FROM (SELECT 1 FROM tasks WHERE owner = r.owner AND state IN ${ACTIVE}
          AND expires_at > r.created_at LIMIT r.max_active) a) END AS n
      FROM r),
    m AS (INSERT INTO message_ids (owner, message_id, task_id)
      SELECT r.owner, r.message_id, r.id FROM r JOIN cnt ON cnt.ord = r.ord
      WHERE r.max_active IS NULL OR cnt.n + $21::int < r.max_active
      ORDER BY r.owner, r.message_id, r.ord
      ON CONFLICT DO NOTHING RETURNING task_id),
    u AS (INSERT INTO tasks (id, context_id, owner, skill, state, input, metadata, created_at, updated_at,
        expires_at, ttl_ms, poll_interval_ms, last_seq, push_configs, tenant, priority, queue_at, trace_parent,
        trace_state)
      SELECT r.id, r.context_id, r.owner, r.skill, 'submitted', r.input, r.metadata, r.created_at, r.created_at,
        r.expires_at, r.ttl_ms, r.poll_interval_ms, r.n_events, r.n_configs, r.tenant, r.priority, r.queue_at,
        r.trace_parent, r.trace_state
      FROM r JOIN m ON m.task_id = r.id
      RETURNING id, owner, queue_at),
    x AS (SELECT * FROM ${unnestHidden(22, 'int int text text int')}
      AS x(ord, seq, kind, payload, notable)),
    e AS (INSERT INTO events (task_id, seq, kind, at, payload)
      SELECT r.id, x.seq, x.kind, r.created_at, x.payload FROM x JOIN r ON r.ord = x.ord JOIN u ON u.id = r.id),
    c AS (SELECT * FROM ${unnestHidden(27, 'int text text text text text smallint text bigint')}
      AS c(ord, id, url, token, auth_scheme, auth_credentials, all_events, format, created_at)),
    p AS (INSERT INTO push_configs (task_id, id, url, token, auth_scheme, auth_credentials, all_events, format,
        created_at)
      SELECT u.id, c.id, c.url, c.token, c.auth_scheme, c.auth_credentials, c.all_events, c.format, c.created_at
      FROM c JOIN r ON r.ord = c.ord JOIN u ON u.id = r.id),
    o AS (INSERT INTO push_outbox (task_id, config_id, seq, created_at, next_attempt_at)
      SELECT u.id, c.id, x.seq, r.created_at, r.created_at
      FROM c JOIN r ON r.ord = c.ord JOIN u ON u.id = r.id JOIN x ON x.ord = c.ord
      WHERE c.all_events = 1 OR x.notable = 1),
    f AS MATERIALIZED (SELECT f.owner, ${aheadCount('f.id', 'f.owner', 'f.queue_at', 'f.created_at', 'f.cap')} AS n
      FROM (SELECT DISTINCT ON (r.owner) r.* FROM r JOIN u ON u.id = r.id WHERE r.cap IS NOT NULL
        ORDER BY r.owner, r.queue_at, r.id) f)
    SELECT r.ord, cnt.n AS active, u.id,
      CASE WHEN u.id IS NOT NULL AND r.cap IS NOT NULL THEN CASE WHEN f.n >= r.cap THEN r.cap ELSE least(r.cap,
        ${aheadCount('r.id', 'r.owner', 'r.queue_at', 'r.created_at', 'r.cap')}
        + (SELECT count(*)::int FROM u b WHERE b.owner = r.owner AND (b.queue_at, b.id) < (r.queue_at, r.id))) END END
        AS ahead,
      CASE WHEN u.id IS NOT NULL AND r.cap IS NOT NULL
        THEN ${runningCounts('r.tenant', 'r.skill', 'r.created_at')} END AS running
    FROM r JOIN cnt ON cnt.ord = r.ord LEFT JOIN u ON u.id = r.id LEFT JOIN f ON f.owner = r.owner`;
}

/** A created task's counts (as queueCounts), for createTaskCounted: $21 the cap. */
const CREATED_COUNTS = `,
      CASE WHEN u.id IS NOT NULL THEN ${aheadCount('$1::text', '$3::text', '$18::bigint', '$7::bigint', '$21::int')} END AS ahead,
      CASE WHEN u.id IS NOT NULL THEN ${runningCounts('$16::text', '$4::text', '$7::bigint')} END AS running`;

const SQL = {
  findByMessageId: `SELECT t.* FROM message_ids m JOIN tasks t ON t.id = m.task_id
    WHERE m.owner = $1 AND m.message_id = $2`,
  // Forgets the message id only while it still names the expired task: a concurrent create that
  // already made a new task with it keeps it.
  forgetMessageId: 'DELETE FROM message_ids WHERE owner = $1 AND message_id = $2 AND task_id = $3',
  /** Serializes the creates of one owner near its limit (see create-task.ts). */
  lockOwner: "SELECT pg_advisory_xact_lock(hashtextextended('taskhandle.owner.' || $1, 0))",
  // $1 id, $2 context_id, $3 owner, $4 skill, $5 input, $6 metadata, $7 created_at, $8 expires_at,
  // $9 ttl_ms, $10 poll_interval_ms, $11 message_id, $12 kinds, $13 payloads, $14 the owner's limit
  // of unfinished tasks (null: none), $15 how far below it a create must stay, $16 tenant,
  // $17 priority, $18 queue_at, $19 trace_parent, $20 trace_state.
  // The message id goes first: a second create with it (here or on another instance) waits for this
  // one on the primary key, then inserts nothing, and so neither does the rest of the statement.
  // The row that comes back always carries the owner's count (`active`), with the task's id if made
  // (the caller builds the row it inserted: RETURNING * cost a 30-column row description and row a create).
  createTask: createTaskSql(false),
  // The same, with the new task's standing counted in the same statement (NewTask.queueCap, $21): the
  // statement's snapshot holds every task committed before it, and not the new one (never counted).
  createTaskCounted: createTaskSql(true),
  // The creates of one turn, with their webhooks and counts, in one statement (see createTasksSql).
  createTasks: createTasksSql(),
  getTask: 'SELECT * FROM tasks WHERE id = $1 AND expires_at > $2',
  // With $3 (the caller) and $4 (the cap), a queued task of $3's comes with its standing's counts
  // (as queueCounts), in the same round trip; CASE runs those subqueries for no other row.
  // Several stamps in one statement (turn-batch.ts): per read its id ($1), now ($2), caller ($3)
  // and cap ($4), as arrays; each row comes with its read's position (ord). With a caller and a cap,
  // a queued task of that caller's comes with its standing's counts (as queueCounts); CASE runs
  // those subqueries for no other row.
  getTaskStamps: `SELECT r.ord, t.owner, t.state, t.last_seq, t.updated_at, t.tenant, t.skill, t.queue_at,
      t.poll_interval_ms, t.run_after,
      CASE WHEN t.state = 'submitted' AND t.owner = r.caller
        THEN ${aheadCount('t.id', 't.owner', 't.queue_at', 'r.now', 'r.cap')} END AS ahead,
      CASE WHEN t.state = 'submitted' AND t.owner = r.caller
        THEN ${runningCounts("COALESCE(NULLIF(t.tenant, ''), t.owner)", 't.skill', 'r.now')} END AS running
    FROM unnest($1::text[], $2::bigint[], $3::text[], $4::int[]) WITH ORDINALITY AS r(id, now, caller, cap, ord)
    JOIN tasks t ON t.id = r.id AND t.expires_at > r.now`,
  // The record and its view's log in one statement, so in one snapshot; the log comes as one JSON
  // document built from the stored payloads, parsed once.
  // With $4, an ended task's log is not read (CASE runs the subquery only in its branch).
  getTaskWithLog: `SELECT t.*, CASE WHEN $4::boolean AND t.state IN ${TERMINAL} THEN NULL ELSE ${logOf('t.id')} END AS log
    FROM tasks t WHERE id = $1 AND expires_at > $2 AND ($3::text IS NULL OR owner = $3)`,
  // $1 id, $2 from, $3 to, $4 status_message, $5 progress, $6 poll_interval_ms, $7 lease_token,
  // $8 release, $9 n, $10 at, $11 approvers, $12 input_deadline, $13 kinds, $14 payloads,
  // $15 ordinals of the events webhooks hear by default, $16 channel, $17 notice, $18 stored bytes,
  // $19 the approver whose grant the write needs, $20 run_after, $21 a retried run's reason,
  // $22 the generation (last_seq) the caller's condition names.
  // One guarded statement per write: state, lease, event counter, log and outbox move together.
  // Its events are numbered from unnest($13), never generate_series(1, $9): the planner puts 1,000
  // rows on a series whose bound is a parameter, and so judged the generic plan 4.6x dearer than a
  // custom one, and planned the statement again on every write (half its 300 µs of database CPU).
  guardedWrite: `WITH u AS (UPDATE tasks SET
      state = COALESCE($3, state),
      status_message = CASE WHEN $3::text IS NULL THEN status_message ELSE $4 END,
      progress = COALESCE($5, progress),
      poll_interval_ms = COALESCE($6, poll_interval_ms),
      updated_at = $10,
      last_seq = last_seq + $9,
      stored_bytes = stored_bytes + $18,
      approvers = CASE WHEN $3::text IS NULL THEN approvers ELSE $11 END,
      input_deadline = CASE WHEN $3::text IS NULL THEN input_deadline ELSE $12 END,
      lease_owner = CASE WHEN $8 THEN NULL ELSE lease_owner END,
      lease_token = CASE WHEN $8 THEN NULL ELSE lease_token END,
      lease_expires_at = CASE WHEN $8 THEN NULL ELSE lease_expires_at END,
      run_after = COALESCE($20, run_after),
      retries = retries + CASE WHEN $21::text IS NULL THEN 0 ELSE 1 END,
      retry_reasons = CASE WHEN $21::text IS NULL THEN retry_reasons
        ELSE (COALESCE(retry_reasons, '[]')::jsonb || to_jsonb($21::text))::text END
    WHERE id = $1 AND state = ANY($2::text[]) AND ($7::text IS NULL OR lease_token = $7)
      AND ($19::text IS NULL OR approvers::jsonb ? $19)
      AND ($22::bigint IS NULL OR last_seq = $22)
    RETURNING *),
  e AS (INSERT INTO events (task_id, seq, kind, at, payload)
    SELECT u.id, u.last_seq - $9 + x.ord, x.kind, $10, x.payload
    FROM u, unnest($13::text[], $14::text[]) WITH ORDINALITY AS x(kind, payload, ord)),
  o AS (INSERT INTO push_outbox (task_id, config_id, seq, created_at, next_attempt_at)
    SELECT u.id, c.id, u.last_seq - $9 + x.ord, $10, $10
    FROM u JOIN push_configs c ON c.task_id = u.id, unnest($13::text[]) WITH ORDINALITY AS x(kind, ord)
    WHERE u.push_configs > 0 AND (c.all_events = 1 OR x.ord = ANY($15::int[]))),
  -- The artifact bytes it adds (or frees) on its owner's total ($23, $18), checked against the quota
  -- ($24) in the same statement: past it, refused_over_quota raises and nothing of the write stays.
  s AS (INSERT INTO owner_usage (owner, bytes) SELECT $23::text, $18 FROM u WHERE $23::text IS NOT NULL
    ON CONFLICT (owner) DO UPDATE SET bytes = GREATEST(0, owner_usage.bytes + excluded.bytes) RETURNING bytes)
  SELECT u.*, pg_notify($16, $17), (SELECT refused_over_quota(s.bytes, $18, $24) FROM s) AS owner_bytes FROM u`,
  insertMessageId: `INSERT INTO message_ids (owner, message_id, task_id) VALUES ($1, $2, $3)
    ON CONFLICT DO NOTHING RETURNING task_id`,
  listTasks: `SELECT * FROM tasks WHERE ${LIST_WHERE}
      AND ($6::bigint IS NULL OR updated_at < $6 OR (updated_at = $6 AND id < $7))
    ORDER BY updated_at DESC, id DESC LIMIT $8`,
  // The same page, its queued tasks with their standing's counts (ListFilter.queueCap, $9), in the
  // page's own snapshot: the head of the owner's queue (its first $9 tasks, numbered in queue order)
  // and the running tasks by tenant and skill are each read once for the page, and only when a row
  // of the page is queued (a CTE is read when first asked for). A task past the head has $9 ahead.
  listTasksCounted: `WITH head AS MATERIALIZED (SELECT id, row_number() OVER (ORDER BY queue_at, id) - 1 AS ahead
        FROM (SELECT id, queue_at FROM tasks WHERE state = 'submitted' AND owner = $1 AND expires_at > $2
          ORDER BY queue_at, id LIMIT $9) h),
      w AS MATERIALIZED (SELECT tenant, skill, count(*)::int AS n FROM tasks
        WHERE ${running('', '$2')} GROUP BY tenant, skill)
    SELECT t.*,
      CASE WHEN t.state = 'submitted'
        THEN COALESCE((SELECT head.ahead::int FROM head WHERE head.id = t.id), $9::int) END AS ahead,
      CASE WHEN t.state = 'submitted' THEN (SELECT ARRAY[
          coalesce(sum(w.n) FILTER (WHERE w.tenant = COALESCE(NULLIF(t.tenant, ''), t.owner)), 0),
          coalesce(sum(w.n) FILTER (WHERE w.skill = t.skill), 0), coalesce(sum(w.n), 0)]::int[] FROM w)
        END AS running
    FROM (SELECT * FROM tasks WHERE ${LIST_WHERE}
        AND ($6::bigint IS NULL OR updated_at < $6 OR (updated_at = $6 AND id < $7))
      ORDER BY updated_at DESC, id DESC LIMIT $8) t
    ORDER BY t.updated_at DESC, t.id DESC`,
  countTasks: `SELECT count(*)::int AS total FROM tasks WHERE ${LIST_WHERE}`,
  readEvents: 'SELECT seq, at, payload FROM events WHERE task_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
  // SKIP LOCKED: runners of several instances claim at once without waiting on each other, and the
  // row lock (rechecked against the row as committed) gives each task to one of them.
  // $1 now, $2 limit, $3 worker, $4 lease until, $5 and $6 the skill filter (skillPasses).
  claimOrphans: `WITH c AS (SELECT id FROM tasks
      WHERE state = 'working' AND lease_expires_at < $1 AND expires_at > $1 AND ${skillPasses('$5', '$6')}
      ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
    UPDATE tasks t SET lease_owner = $3, lease_token = gen_random_uuid()::text, lease_expires_at = $4,
      attempts = t.attempts + 1,
      -- a released lease (0) was a graceful shutdown; an expired one means its runner died
      interruptions = t.interruptions + CASE WHEN t.lease_expires_at > 0 THEN 1 ELSE 0 END
    FROM c WHERE t.id = c.id
    RETURNING t.*`,
  // The fair claim (engine/fair-share.ts): one read, then one claim, under one lock per cluster:
  // the limits hold across instances (a claim reads every claim committed before it).
  // What the pick needs, in one snapshot and one round trip: the first $2 tasks of each owner's
  // queue (the owners found one index seek each: a loose scan of tasks_queue_by_owner, so the cost
  // follows the queued owners, not the queued tasks), the running tasks counted, and the turns of
  // the queued owners and their tenants. $1 now, $2 per owner, $3 and $4 the skill filter.
  claimView: `WITH RECURSIVE o(owner) AS (
      (SELECT owner FROM tasks WHERE state = 'submitted' ORDER BY owner LIMIT 1)
      UNION ALL
      SELECT (SELECT t.owner FROM tasks t WHERE t.state = 'submitted' AND t.owner > o.owner
        ORDER BY t.owner LIMIT 1) FROM o WHERE o.owner IS NOT NULL),
    q AS (SELECT h.* FROM o CROSS JOIN LATERAL (SELECT id, owner, tenant, skill, created_at FROM tasks t
      WHERE t.state = 'submitted' AND t.owner = o.owner AND t.expires_at > $1 AND t.run_after <= $1
        AND ${skillPasses('$3', '$4', 't.')}
      ORDER BY t.queue_at, t.id LIMIT $2) h)
    SELECT (SELECT coalesce(json_agg(q), '[]') FROM q)::text AS queued,
      (SELECT coalesce(json_agg(r), '[]') FROM (SELECT tenant, owner, skill, count(*)::int AS n FROM tasks
        WHERE ${running('', '$1')} GROUP BY tenant, owner, skill) r)::text AS running,
      (SELECT coalesce(json_agg(s), '[]') FROM (SELECT key, last_at FROM scheduler_turns
        WHERE key IN (SELECT 't:' || CASE WHEN tenant = '' THEN owner ELSE tenant END FROM q
          UNION SELECT 'o:' || owner FROM q)) s)::text AS turns`,
  // Where a queued task stands: its owner's tasks before it (at most $6 of them), and the running.
  // $1 id, $2 owner, $3 queue_at, $4 now, $5 tenant, $6 cap, $7 skill.
  queueCounts: `SELECT ${aheadCount('$1', '$2', '$3', '$4', '$6')} AS ahead,
      ${runningCounts('$5', '$7', '$4')} AS running`,
  // $1 now, $2 the picked ids, $3 worker, $4 lease until, $5 the working status payload,
  // $6 channel, $7 notice prefix. SKIP LOCKED: a task another claim or write holds is left. The
  // claimed tasks' tenants and owners take their turn (written in key order: concurrent claims
  // lock turn rows in one order, never in a cycle).
  claimQueued: `WITH c AS (SELECT id FROM tasks WHERE id = ANY($2::text[]) AND state = 'submitted'
      AND expires_at > $1 FOR UPDATE SKIP LOCKED),
    u AS (UPDATE tasks t SET lease_owner = $3, lease_token = gen_random_uuid()::text,
        lease_expires_at = $4, attempts = t.attempts + 1, state = 'working', status_message = NULL,
        updated_at = $1, last_seq = t.last_seq + 1
      FROM c WHERE t.id = c.id
      RETURNING t.*),
    e AS (INSERT INTO events (task_id, seq, kind, at, payload) SELECT id, last_seq, 'status', $1, $5 FROM u),
    o AS (INSERT INTO push_outbox (task_id, config_id, seq, created_at, next_attempt_at)
      SELECT u.id, p.id, u.last_seq, $1, $1 FROM u JOIN push_configs p ON p.task_id = u.id
      WHERE u.push_configs > 0 AND p.all_events = 1),
    k AS (SELECT 't:' || CASE WHEN tenant = '' THEN owner ELSE tenant END AS key FROM u
      UNION SELECT 'o:' || owner FROM u),
    s AS (INSERT INTO scheduler_turns (key, last_at) SELECT key, $1 FROM k ORDER BY key
      ON CONFLICT (key) DO UPDATE SET last_at = GREATEST(scheduler_turns.last_at, excluded.last_at))
    -- Each task's log as it stood before this statement (its working status is the caller's to add):
    -- the run starts from it without reading the task again.
    SELECT u.*, ${logOf('u.id')} AS log, pg_notify($6, $7 || u.id || ' working')
    FROM u ORDER BY array_position($2::text[], u.id)`,
  renewLease: `UPDATE tasks SET lease_expires_at = $4
    WHERE id = $1 AND lease_token = $2 AND state = 'working' AND expires_at > $3
    RETURNING cancel_requested`,
  releaseLease: `UPDATE tasks SET lease_owner = NULL, lease_token = NULL, lease_expires_at = 0
    WHERE id = $1 AND lease_token = $2`,
  // $4: the generation (last_seq) a conditional cancel names, checked in the same statement.
  requestCancel: `UPDATE tasks SET cancel_requested = 1
    WHERE id = $1 AND ($4::bigint IS NULL OR last_seq = $4) RETURNING pg_notify($2, $3)`,
  waiting: `SELECT * FROM tasks WHERE state = 'input-required' AND ${alive('', '$3')}
      AND (owner = $1 OR ($2::text IS NOT NULL AND approvers::jsonb ? $2))
    ORDER BY updated_at LIMIT $4`,
  overdueInputs: `SELECT * FROM tasks WHERE state = 'input-required' AND input_deadline <= $1
    ORDER BY input_deadline LIMIT $2`,
  // Instances sweep at once: each deletes the expired tasks that no other sweep has locked.
  forgetTurns: 'DELETE FROM scheduler_turns WHERE last_at < $1 RETURNING 1',
  deleteExpired: `WITH doomed AS (SELECT id FROM tasks WHERE expires_at <= $1
      ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED),
    a AS (DELETE FROM events WHERE task_id IN (SELECT id FROM doomed)),
    b AS (DELETE FROM message_ids WHERE task_id IN (SELECT id FROM doomed)),
    c AS (DELETE FROM push_configs WHERE task_id IN (SELECT id FROM doomed)),
    d AS (DELETE FROM push_outbox WHERE task_id IN (SELECT id FROM doomed)),
    e AS (DELETE FROM blob_pieces WHERE task_id IN (SELECT id FROM doomed)),
    g AS (DELETE FROM push_attempts WHERE task_id IN (SELECT id FROM doomed)),
    -- The snapshot still holds the doomed rows: their bytes leave their owners' totals.
    f AS (UPDATE owner_usage SET bytes = GREATEST(0, owner_usage.bytes - s.bytes)
      FROM (SELECT owner, sum(stored_bytes) AS bytes FROM tasks
        WHERE id IN (SELECT id FROM doomed) AND stored_bytes > 0 GROUP BY owner) s
      WHERE owner_usage.owner = s.owner)
    DELETE FROM tasks WHERE id IN (SELECT id FROM doomed) RETURNING id`,
  /** Taken before a webhook changes: the recount that follows sees every other change committed. */
  // The webhooks' count comes back with the lock: a new one is checked against it under the lock.
  lockTask: 'SELECT push_configs FROM tasks WHERE id = $1 FOR UPDATE',
  putPushConfig: `INSERT INTO push_configs
      (task_id, id, url, token, auth_scheme, auth_credentials, all_events, format, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
    ON CONFLICT (task_id, id) DO UPDATE SET url = excluded.url, token = excluded.token,
      auth_scheme = excluded.auth_scheme, auth_credentials = excluded.auth_credentials,
      all_events = excluded.all_events, format = excluded.format, created_at = excluded.created_at`,
  getPushConfig: 'SELECT * FROM push_configs WHERE task_id = $1 AND id = $2',
  listPushConfigs: 'SELECT * FROM push_configs WHERE task_id = $1 ORDER BY created_at, id',
  deletePushConfig: 'DELETE FROM push_configs WHERE task_id = $1 AND id = $2',
  deleteConfigNotifications:
    'DELETE FROM push_outbox WHERE task_id = $1 AND config_id = $2 AND dead_at IS NULL',
  countPushConfigs: `UPDATE tasks SET push_configs = (SELECT count(*) FROM push_configs WHERE task_id = $1)
    WHERE id = $1 RETURNING push_configs`,
  // A created task's notifications, for the webhooks given with its first message.
  queueNotifications: `INSERT INTO push_outbox (task_id, config_id, seq, created_at, next_attempt_at)
    SELECT c.task_id, c.id, x.seq, $2, $2 FROM push_configs c, unnest($3::int[], $4::int[]) AS x(seq, notable)
    WHERE c.task_id = $1 AND (c.all_events = 1 OR x.notable = 1)`,
  // Head of line per webhook: a notification is due only when no older one of its (task, config)
  // is still undelivered (dead letters do not block). Of the due ones, each instance leases those
  // no other instance has locked.
  claimNotifications: `WITH due AS (SELECT o.task_id, o.config_id, o.seq FROM push_outbox o
      WHERE o.dead_at IS NULL AND o.next_attempt_at <= $1 AND o.leased_until <= $1
        AND NOT EXISTS (SELECT 1 FROM push_outbox p WHERE p.task_id = o.task_id
          AND p.config_id = o.config_id AND p.seq < o.seq AND p.dead_at IS NULL)
      ORDER BY o.next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED),
    l AS (UPDATE push_outbox o SET leased_until = $3, attempts = o.attempts + 1
      FROM due WHERE o.task_id = due.task_id AND o.config_id = due.config_id AND o.seq = due.seq
      RETURNING o.task_id, o.config_id, o.seq, o.created_at, o.attempts, o.next_attempt_at)
    SELECT l.config_id, l.seq, l.created_at AS n_created_at, l.attempts, c.*
    FROM l JOIN push_configs c ON c.task_id = l.task_id AND c.id = l.config_id
    ORDER BY l.next_attempt_at`,
  deliveredNotification: 'DELETE FROM push_outbox WHERE task_id = $1 AND config_id = $2 AND seq = $3',
  retryNotification: `UPDATE push_outbox SET next_attempt_at = $4, leased_until = 0, last_error = $5
    WHERE task_id = $1 AND config_id = $2 AND seq = $3`,
  deadNotification: `UPDATE push_outbox SET dead_at = $4, leased_until = 0, last_error = $5
    WHERE task_id = $1 AND config_id = $2 AND seq = $3`,
  // On the unfinished-by-owner partial index: the cost follows the owner's unfinished tasks.
  // The partial index of the owner's unfinished tasks with webhooks: the cost follows those alone.
  countActivePushConfigs: `SELECT coalesce(sum(push_configs), 0) AS n FROM tasks WHERE owner = $1
      AND push_configs > 0 AND state IN ('submitted', 'working', 'input-required', 'auth-required')
      AND expires_at > $2`,
  insertBlobPiece: 'INSERT INTO blob_pieces (task_id, seq, part, piece, data) VALUES ($1, $2, $3, $4, $5)',
  readBlobPiece: 'SELECT data FROM blob_pieces WHERE task_id = $1 AND seq = $2 AND part = $3 AND piece = $4',
  // The row lock serializes one owner's writers: the total it returns is exact under any concurrency.
  deleteEventBlobPieces: 'DELETE FROM blob_pieces WHERE task_id = $1 AND seq = ANY($2::integer[])',
  ping: 'SELECT 1',
} as const;

export type Statements = { readonly [K in keyof typeof SQL]: Statement };

/** The statements, named `taskhandle_<key>` (prepared once per connection, on first use). */
export const STATEMENTS: Statements = Object.fromEntries(
  Object.entries(SQL).map(([key, text]) => [key, { name: `taskhandle_${key}`, text }]),
) as unknown as Statements;
