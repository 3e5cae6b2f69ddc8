import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { OperatorFilter } from '../src/engine/operator-port.js';
import type { TaskStore } from '../src/engine/store-port.js';
import { encodeCursor } from '../src/store/cursor.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { POSTGRES_URL } from './postgres-url.js';

/**
 * The operator console's list over a large store: seeds `--tasks` tasks (default 1,000,000) straight
 * into a migrated SQLite file and a PostgreSQL schema (1000 owners, 5 skills, states as a busy
 * server holds them, created over 30 days), then times `listAllTasks` at the first page and deep
 * pages (a cursor half-way down and at the last page), with each filter, plus the counts and the
 * charts' hour. docs/console.md records a run.
 *
 *   npm run build --silent && npx tsc -p tsconfig.perf.json && node dist/perf/console-list.js [--tasks N] [--no-postgres]
 */

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 1, 12);
const args = process.argv.slice(2);
const TASKS = Number(args[args.indexOf('--tasks') + 1] ?? '') || 1_000_000;
const RUNS = 20;

/**
 * One SELECT that makes the rows, in SQL both databases speak (the generator differs): task i is
 * owned by principal i % 1000, runs skill i % 5, was created i * 30 days / N ago (oldest first) and
 * updated up to 10 minutes later; 1 in 10 failed, 1 in 50 canceled, the newest 200 still run.
 */
const ROW = (i: string, n: number, pad: (expr: string) => string) => `
  ${pad(i)} AS id, 'ctx' AS context_id,
  'api-key:tenant/p' || (${i} % 1000) AS owner,
  'skill-' || (${i} % 5) AS skill,
  CASE WHEN ${i} > ${n - 100} THEN 'submitted' WHEN ${i} > ${n - 200} THEN 'working'
    WHEN ${i} % 10 = 0 THEN 'failed' WHEN ${i} % 50 = 1 THEN 'canceled' ELSE 'completed' END AS state,
  ${NOW - 30 * DAY} + ${i} * ${Math.floor((30 * DAY) / n)} AS created_at,
  ${NOW - 30 * DAY} + ${i} * ${Math.floor((30 * DAY) / n)} + (${i} * 7919) % 600000 AS updated_at,
  ${NOW + 30 * DAY} AS expires_at, ${30 * DAY} AS ttl_ms, 1000 AS poll_interval_ms, 3 AS last_seq`;
const COLUMNS =
  'id, context_id, owner, skill, state, created_at, updated_at, expires_at, ttl_ms, poll_interval_ms, last_seq';

async function seedSqlite(path: string): Promise<void> {
  await new SqliteStore({ path }).close(); // migrated
  const db = new Database(path);
  db.pragma('journal_mode = DELETE');
  db.pragma('synchronous = OFF');
  db.exec(`INSERT INTO tasks (${COLUMNS})
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${TASKS})
    SELECT ${ROW('i', TASKS, (e) => `printf('%08x-0000-7000-8000-%012x', ${e}, ${e} * 2654435761 % 281474976710656)`)} FROM n`);
  db.exec('ANALYZE');
  db.pragma('journal_mode = WAL');
  db.close();
}

async function seedPostgres(url: string, schema: string): Promise<void> {
  await (await PostgresStore.open({ url, schema, poolMax: 1 })).close(); // migrated
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SET search_path TO ${schema}`);
    await client.query(`INSERT INTO tasks (${COLUMNS})
      SELECT ${ROW('(i::bigint)', TASKS, (e) => `lpad(to_hex(${e}), 8, '0') || '-0000-7000-8000-' || lpad(to_hex((${e} * 2654435761) % 281474976710656), 12, '0')`)}
      FROM generate_series(1, ${TASKS}) AS i`);
    await client.query('ANALYZE tasks');
  } finally {
    await client.end();
  }
}

/** Median and worst of `RUNS` calls, in ms. */
async function time(work: () => Promise<unknown>): Promise<{ median: number; max: number }> {
  await work(); // warm
  const took: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    await work();
    took.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  took.sort((a, b) => a - b);
  return { median: took[Math.floor(RUNS / 2)] ?? 0, max: took.at(-1) ?? 0 };
}

/** A cursor `depth` tasks down the list `filter` gives (found by walking there once, untimed). */
async function cursorAt(store: TaskStore, filter: Omit<OperatorFilter, 'now' | 'pageSize'>, depth: number) {
  let pageToken: string | undefined;
  let seen = 0;
  let last: { updatedAt: number; id: string } | undefined;
  while (seen < depth) {
    const page = await store.operator.listAllTasks({
      ...filter,
      now: NOW,
      pageSize: Math.min(1000, depth - seen),
      pageToken,
    });
    const tail = page.records.at(-1);
    if (!tail) break;
    last = tail;
    seen += page.records.length;
    if (!page.nextPageToken) break;
    pageToken = page.nextPageToken;
  }
  return { token: last ? encodeCursor(last.updatedAt, last.id) : undefined, seen };
}

async function measure(name: string, store: TaskStore): Promise<void> {
  const cases: [string, Omit<OperatorFilter, 'now' | 'pageSize'>][] = [
    ['all', {}],
    ['state=failed', { state: 'failed' }],
    ['owner (1 of 1000)', { owner: 'api-key:tenant/p7' }],
    ['skill (1 of 5)', { skill: 'skill-3' }],
    ['created in one day', { createdAfter: NOW - 16 * DAY, createdBefore: NOW - 15 * DAY }],
  ];
  console.log(`\n${name}: ${TASKS} tasks, page of 50, median / worst of ${RUNS} (ms)`);
  console.log('| filter | first page | half-way down | last page |');
  console.log('| --- | --- | --- | --- |');
  for (const [label, filter] of cases) {
    const page = (pageToken?: string) => () =>
      store.operator.listAllTasks({ ...filter, now: NOW, pageSize: 50, pageToken });
    const first = await time(page());
    const all = label === 'all' ? TASKS : (await cursorAt(store, filter, Number.MAX_SAFE_INTEGER)).seen;
    const half = await cursorAt(store, filter, Math.floor(all / 2));
    const end = await cursorAt(store, filter, Math.max(0, all - 25));
    const mid = await time(page(half.token));
    const last = await time(page(end.token));
    const f = (t: { median: number; max: number }) => `${t.median.toFixed(2)} / ${t.max.toFixed(2)}`;
    console.log(`| ${label} (${all} match) | ${f(first)} | ${f(mid)} | ${f(last)} |`);
  }
  const idText = await time(() =>
    store.operator.listAllTasks({ idContains: 'ffff-0000', now: NOW, pageSize: 50 }),
  );
  console.log(
    `| id contains a rare text (scans) | ${idText.median.toFixed(1)} / ${idText.max.toFixed(1)} | | |`,
  );
  const counts = await time(() => store.operator.countTasksByState());
  console.log(`counts by state: ${counts.median.toFixed(1)} / ${counts.max.toFixed(1)} ms`);
  const hour = await time(() => store.operator.recentActivity(NOW - 3_600_000, 20_000));
  console.log(`the charts' hour (recentActivity): ${hour.median.toFixed(1)} / ${hour.max.toFixed(1)} ms`);
}

const dir = mkdtempSync(join(tmpdir(), 'taskhandle-console-bench-'));
try {
  const path = join(dir, 'tasks.db');
  let started = Date.now();
  await seedSqlite(path);
  console.log(`seeded SQLite with ${TASKS} tasks in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const sqlite = new SqliteStore({ path });
  await measure('SQLite', sqlite);
  await sqlite.close();
  if (!args.includes('--no-postgres')) {
    const url = POSTGRES_URL;
    const schema = `console_bench_${process.pid}`;
    try {
      started = Date.now();
      await seedPostgres(url, schema);
      console.log(
        `\nseeded PostgreSQL with ${TASKS} tasks in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      const store = await PostgresStore.open({ url, schema, poolMax: 2 });
      await measure('PostgreSQL', store).finally(() => store.close());
    } finally {
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
