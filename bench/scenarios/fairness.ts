import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { createServer, defineSkill } from 'taskhandle';
import { z } from 'zod';
import { writeKeysFile } from '../api-keys.js';
import { call, sendBody } from '../rpc.js';
import { freshDbPath, tempPath } from '../temp.js';

/**
 * Fair claims under load (docs/scheduling.md). Two measurements:
 *
 * - latency, on the public API: createServer in this process (its store, engine and runner as `serve`
 *   builds them), jobs created over A2A JSON-RPC with two tenants' API keys. Tenant acme floods
 *   `floodJobs` long jobs (`longMs` on average: from half to one and a half times it, so that slots
 *   free one at a time, not all together) onto `slots` runner slots, then tenant globex submits
 *   `shortJobs` short ones, one every `shortEveryMs`: how long each short one waits from its create to
 *   its run's start (the skill runs here, so it sees that moment on this process's clock). The next
 *   slot frees every `longMs / slots` on average; a global FIFO would make each wait for the whole
 *   flood ahead of it;
 * - claim rate, on the store alone: perf/claim-rate.ts of the taskhandle package, run as a process
 *   (the store port is not public API): claims of `slots` tasks, each claimed batch completed at
 *   once, with `queued` tasks queued (one owner holding all but 1,000 of them, 1,000 spread over 100
 *   others).
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

type StoreKind = FairnessResult['store'];

/** When each task's run started, by task id (performance.now()). */
const runStarted = new Map<string, number>();

const hold = defineSkill({
  id: 'hold',
  description: 'waits ms, then ends',
  input: z.object({ ms: z.number() }),
  pollIntervalMs: 1000,
  ttlMs: 3_600_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    if (!runStarted.has(ctx.taskId)) runStarted.set(ctx.taskId, performance.now());
    await sleep(ctx.input.ms, undefined, { signal: ctx.signal });
    return undefined;
  },
});

export async function fairness(o: FairnessOptions): Promise<FairnessResult[]> {
  const results: FairnessResult[] = [];
  for (const kind of ['sqlite', 'postgres'] as const) {
    if (kind === 'postgres' && !o.postgresUrl) continue;
    const wait = await waits(kind, o);
    results.push({ store: kind, wait, claimRate: await claimRates(kind, o) });
  }
  return results;
}

/** The store of one kind as createServer's options: a fresh SQLite file, or a fresh PostgreSQL schema. */
function storeOptions(kind: StoreKind, o: FairnessOptions) {
  return kind === 'sqlite'
    ? { database: `sqlite:${freshDbPath('fairness')}` as const, sqliteSynchronous: 'normal' as const }
    : {
        database: o.postgresUrl as `postgres://${string}`,
        databaseSchema: `bench_fair_${randomUUID().slice(0, 8)}`,
      };
}

async function waits(kind: StoreKind, o: FairnessOptions): Promise<FairnessResult['wait']> {
  const { file, headers } = writeKeysFile('fairness', { alice: 'acme', bob: 'globex' });
  const server = await createServer({
    ...storeOptions(kind, o),
    skills: [hold],
    builtinSkills: false,
    host: '127.0.0.1',
    port: 0,
    env: {},
    logLevel: 'silent',
    apiKeysFile: file,
    keysDir: tempPath('fairness-keys'), // else ./data/keys on PostgreSQL, in the working directory
    runnerConcurrency: o.slots,
    maxActiveTasks: 0, // the flood is the point: no per-principal cap
    shutdownTimeoutMs: 0, // the flood's jobs still running are released, not waited for
  });
  const submit = async (who: 'alice' | 'bob', ms: number): Promise<string> => {
    const reply = await call(
      server.url,
      sendBody({ data: { skill: 'hold', input: { ms } } })(),
      headers[who],
    );
    const id = reply.result?.task?.id;
    if (typeof id !== 'string') throw new Error(`SendMessage returned no task: ${JSON.stringify(reply)}`);
    return id;
  };
  try {
    for (let i = 0; i < o.floodJobs; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, o.floodJobs - i) }, () =>
          submit('alice', Math.round(o.longMs * (0.5 + Math.random()))),
        ),
      );
    }
    // Let the flood fill every slot, and its first jobs' ends spread out.
    await sleep(o.longMs);
    const created = new Map<string, number>();
    for (let i = 0; i < o.shortJobs; i++) {
      const at = performance.now();
      created.set(await submit('bob', 1), at);
      await sleep(o.shortEveryMs);
    }
    const deadline = performance.now() + o.longMs * 4 + 10_000;
    while ([...created.keys()].some((id) => !runStarted.has(id)) && performance.now() < deadline)
      await sleep(20);
    const waited = [...created].flatMap(([id, at]) => {
      const s = runStarted.get(id);
      return s === undefined ? [] : [s - at];
    });
    waited.sort((a, b) => a - b);
    const q = (p: number) =>
      Math.round(waited[Math.min(waited.length - 1, Math.floor(p * waited.length))] ?? Number.NaN);
    return { p50: q(0.5), p99: q(0.99), max: Math.round(waited.at(-1) ?? Number.NaN), n: waited.length };
  } finally {
    await server.close();
    runStarted.clear();
  }
}

const run = promisify(execFile);
/** The taskhandle package this one depends on (the repository's root): perf/ is built there. */
const TASKHANDLE_ROOT = dirname(createRequire(import.meta.url).resolve('taskhandle/package.json'));
const CLAIM_RATE = join(TASKHANDLE_ROOT, 'dist/perf/claim-rate.js');

/** The claim alone at each queue size, from perf/claim-rate.ts (one JSON line per size). */
async function claimRates(kind: StoreKind, o: FairnessOptions): Promise<FairnessResult['claimRate']> {
  const args = [
    CLAIM_RATE,
    '--store',
    kind,
    '--queued',
    o.claimQueues.join(','),
    '--claims',
    String(o.claims),
    '--slots',
    String(o.slots),
    ...(o.postgresUrl ? ['--postgres', o.postgresUrl] : []),
  ];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1 << 20 }).catch((err: Error) => {
    throw new Error(
      `${CLAIM_RATE} failed (${err.message}): the root's \`npm run bench\` builds it (tsc -p tsconfig.perf.json)`,
    );
  });
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as FairnessResult['claimRate'][number]);
}
