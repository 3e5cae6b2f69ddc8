import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { pino } from 'pino';
import type { TaskStore } from '../src/engine/store-port.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { POSTGRES_URL } from './postgres-url.js';

/**
 * The claim alone, on the store (no engine, no runner, no HTTP): claims of `--slots` tasks, each
 * claimed batch completed before the next claim, with `--queued` tasks queued (one owner holding all
 * but 1,000 of them, 1,000 spread over 100 others), seeded in SQL and analyzed. The bench's fairness
 * scenario runs it as a process and reads the JSON line it prints per queue size (bench/README.md);
 * it measures the store port, which taskhandle's public API does not expose, hence here.
 *
 *   npm run build --silent && npx tsc -p tsconfig.perf.json &&
 *     node dist/perf/claim-rate.js --store sqlite|postgres [--postgres URL] [--queued 1000,1000000] [--claims 200] [--slots 16]
 */
const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'sqlite' },
    postgres: { type: 'string' },
    queued: { type: 'string', default: '1000,1000000' },
    claims: { type: 'string', default: '200' },
    slots: { type: 'string', default: '16' },
  },
});
const kind = values.store;
if (kind !== 'sqlite' && kind !== 'postgres') throw new Error(`--store ${kind}: say sqlite or postgres`);
const postgresUrl = values.postgres ?? POSTGRES_URL;
const claims = Number(values.claims);
const slots = Number(values.slots);

const logger = pino({ level: 'silent' });

interface Opened {
  store: TaskStore;
  seed(sql: string): Promise<void>;
  close(): Promise<void>;
}

async function open(): Promise<Opened> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'taskhandle-claim-rate-'));
    const path = join(dir, 'tasks.db');
    const store = new SqliteStore({ path, synchronous: 'normal' });
    return {
      store,
      async seed(sql) {
        const db = new Database(path);
        db.exec(sql);
        // What the store's hourly PRAGMA optimize would have done by the time a queue grew this long.
        db.exec('ANALYZE');
        db.close();
      },
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const schema = `bench_fair_${randomUUID().slice(0, 8)}`;
  const store = await PostgresStore.open({ url: postgresUrl, schema, poolMax: 10, logger });
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    store,
    seed: (sql) => admin(`SET search_path TO ${schema}; ${sql}; ANALYZE tasks`),
    async close() {
      await store.close();
      await admin(`DROP SCHEMA ${schema} CASCADE`);
    },
  };
}

/** Seeds `queued` queued tasks in SQL (one owner holds all but 1,000; 100 others 10 each). */
function seedSql(queued: number, now: number): string {
  const big = Math.max(0, queued - 1000);
  const spread = queued - big;
  const row = (n: string, owner: string) =>
    `'seed-' || ${n}, 'ctx', ${owner}, 'hold', 'submitted', '{"ms":1}', ${now} - 100000 + ${n}, ${now} - 100000 + ${n},
      ${now} + 3600000, 3600000, 1000, 2, ${kind === 'sqlite' ? `substr(${owner}, 1, instr(${owner}, '/') - 1)` : `split_part(${owner}, '/', 1)`},
      ${now} - 100000 + ${n}`;
  const cols =
    'id, context_id, owner, skill, state, input, created_at, updated_at, expires_at, ttl_ms, poll_interval_ms, last_seq, tenant, queue_at';
  const series = (count: number) =>
    kind === 'sqlite'
      ? `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${count}) SELECT`
      : `SELECT`;
  const from = (count: number) =>
    kind === 'sqlite' ? 'FROM s' : `FROM generate_series(1, ${count}) AS s(n)`;
  const bigOwner = `'api-key:acme/flood'`;
  const other = `'api-key:t' || (n % 100) || '/p'`;
  const parts: string[] = [];
  if (big > 0) parts.push(`INSERT INTO tasks (${cols}) ${series(big)} ${row('n', bigOwner)} ${from(big)}`);
  if (spread > 0)
    parts.push(`INSERT INTO tasks (${cols}) ${series(spread)} ${row(`(n + ${big})`, other)} ${from(spread)}`);
  return parts.join(';\n');
}

/** Claims per second (of `slots` tasks each, completed), and ms per claim at p50 and p99. */
async function claimRate(queued: number) {
  const { store, seed, close } = await open();
  try {
    const now = Date.now();
    await seed(seedSql(queued, now));
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < claims; i++) {
      const t0 = performance.now();
      const claimed = await store.claim('bench', now + i, 60_000, slots);
      times.push(performance.now() - t0);
      await Promise.all(
        claimed.map((c) =>
          store.write({
            taskId: c.record.id,
            from: ['working'],
            to: 'completed',
            leaseToken: c.leaseToken,
            releaseLease: true,
            events: [{ kind: 'status', state: 'completed' }],
            at: now + i,
          }),
        ),
      );
    }
    const totalS = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    const q = (p: number) => Number((times[Math.floor(p * (times.length - 1))] ?? Number.NaN).toFixed(2));
    return { queued, claimsPerS: Math.round(claims / totalS), p50Ms: q(0.5), p99Ms: q(0.99) };
  } finally {
    await close();
  }
}

for (const queued of values.queued.split(',').map(Number)) {
  console.log(JSON.stringify(await claimRate(queued)));
}
