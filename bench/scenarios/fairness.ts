import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';
import { pino } from 'pino';
import { z } from 'zod';
import { tenantOf } from '../../src/auth/principal.js';
import { composeEngine } from '../../src/engine/compose.js';
import { SkillRegistry } from '../../src/engine/registry.js';
import { Runner } from '../../src/engine/runner.js';
import { defineSkill } from '../../src/engine/skill.js';
import type { TaskStore } from '../../src/engine/store-port.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { freshDbPath } from '../temp.js';

/**
 * Fair claims under load (docs/scheduling.md). Two measurements, in process (engine, runner and
 * store as `serve` builds them, no HTTP: the claim path is what is measured):
 *
 * - latency: tenant acme floods `floodJobs` long jobs (`longMs` on average: from half to one and a
 *   half times it, so that slots free one at a time, not all together) onto `slots` runner slots,
 *   then tenant globex submits `shortJobs` short ones, one every `shortEveryMs`: how long each short
 *   one waits from create to `working`. The next slot frees every `longMs / slots` on average; a
 *   global FIFO would make each wait for the whole flood ahead of it;
 * - claim rate: claims of `slots` tasks, each claimed batch completed at once, with `queued` tasks
 *   queued (one owner holding all but 1,000 of them, 1,000 spread over 100 others).
 */
export interface FairnessOptions {
  floodJobs: number;
  longMs: number;
  shortJobs: number;
  shortEveryMs: number;
  slots: number;
  claimQueues: number[];
  claims: number;
  postgresUrl?: string;
}

export interface FairnessResult {
  store: 'sqlite' | 'postgres';
  /** Create to working of the short jobs, ms. */
  wait: { p50: number; p99: number; max: number; n: number };
  /** Per queue size: claims (of `slots` tasks) per second, and ms per claim at p50 and p99. */
  claimRate: { queued: number; claimsPerS: number; p50Ms: number; p99Ms: number }[];
}

const logger = pino({ level: 'silent' });
const ACME = 'api-key:acme/alice';
const GLOBEX = 'api-key:globex/bob';

const hold = defineSkill({
  id: 'hold',
  description: 'waits ms, then ends',
  input: z.object({ ms: z.number() }),
  pollIntervalMs: 1000,
  ttlMs: 3_600_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    await sleep(ctx.input.ms, undefined, { signal: ctx.signal });
    return undefined;
  },
});

export async function fairness(o: FairnessOptions): Promise<FairnessResult[]> {
  const results: FairnessResult[] = [];
  for (const kind of ['sqlite', 'postgres'] as const) {
    if (kind === 'postgres' && !o.postgresUrl) continue;
    const wait = await waits(kind, o);
    const claimRate: FairnessResult['claimRate'] = [];
    for (const queued of o.claimQueues) claimRate.push(await claimRateWith(kind, queued, o));
    results.push({ store: kind, wait, claimRate });
  }
  return results;
}

interface Opened {
  store: TaskStore;
  seed(sql: string): Promise<void>;
  close(): Promise<void>;
}

async function open(kind: 'sqlite' | 'postgres', o: FairnessOptions): Promise<Opened> {
  if (kind === 'sqlite') {
    const path = freshDbPath('fairness');
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
      close: () => store.close(),
    };
  }
  const schema = `bench_fair_${randomUUID().slice(0, 8)}`;
  const url = o.postgresUrl as string;
  const store = await PostgresStore.open({ url, schema, poolMax: 10, logger });
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
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

async function waits(kind: 'sqlite' | 'postgres', o: FairnessOptions): Promise<FairnessResult['wait']> {
  const { store, close } = await open(kind, o);
  const { journal, engine } = composeEngine({
    store,
    skills: new SkillRegistry([hold], 'hold'),
    maxTtlMs: 3_600_000,
    cancelGraceMs: 1000,
    artifactUrl: (t, a) => `/${t}/${a}`,
    tenantOf,
  });
  const runner = new Runner({
    engine,
    journal,
    workerId: 'bench',
    concurrency: o.slots,
    leaseMs: 30_000,
    pollMs: 1000,
    maxInterruptions: 3,
    logger,
  });
  try {
    for (let i = 0; i < o.floodJobs; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, o.floodJobs - i) }, () =>
          engine.submit({
            owner: ACME,
            skill: 'hold',
            input: { ms: Math.round(o.longMs * (0.5 + Math.random())) },
          }),
        ),
      );
    }
    runner.start();
    const started = new Map<string, number>();
    engine.onStatus((id, state) => {
      if (state === 'working' && !started.has(id)) started.set(id, performance.now());
    });
    // Let the flood fill every slot, and its first jobs' ends spread out.
    await sleep(o.longMs);
    const created = new Map<string, number>();
    for (let i = 0; i < o.shortJobs; i++) {
      const at = performance.now();
      const { view } = await engine.submit({ owner: GLOBEX, skill: 'hold', input: { ms: 1 } });
      created.set(view.record.id, at);
      await sleep(o.shortEveryMs);
    }
    const deadline = performance.now() + o.longMs * 4 + 10_000;
    while ([...created.keys()].some((id) => !started.has(id)) && performance.now() < deadline)
      await sleep(20);
    const waited = [...created].flatMap(([id, at]) => {
      const s = started.get(id);
      return s === undefined ? [] : [s - at];
    });
    waited.sort((a, b) => a - b);
    const q = (p: number) =>
      Math.round(waited[Math.min(waited.length - 1, Math.floor(p * waited.length))] ?? Number.NaN);
    return { p50: q(0.5), p99: q(0.99), max: Math.round(waited.at(-1) ?? Number.NaN), n: waited.length };
  } finally {
    await runner.stop(0);
    await close();
  }
}

/** Seeds `queued` queued tasks in SQL (one owner holds all but 1,000; 100 others 10 each). */
function seedSql(kind: 'sqlite' | 'postgres', queued: number, now: number): string {
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

async function claimRateWith(
  kind: 'sqlite' | 'postgres',
  queued: number,
  o: FairnessOptions,
): Promise<FairnessResult['claimRate'][number]> {
  const { store, seed, close } = await open(kind, o);
  try {
    const now = Date.now();
    await seed(seedSql(kind, queued, now));
    const times: number[] = [];
    const started = performance.now();
    for (let i = 0; i < o.claims; i++) {
      const t0 = performance.now();
      const claimed = await store.claim('bench', now + i, 60_000, o.slots);
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
    return { queued, claimsPerS: Math.round(o.claims / totalS), p50Ms: q(0.5), p99Ms: q(0.99) };
  } finally {
    await close();
  }
}
