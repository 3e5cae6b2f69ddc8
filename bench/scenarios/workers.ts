import { setMaxListeners } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { cpuSeconds as processCpuSeconds, waitForQuiet } from '../proc-stats.js';
import type { ServerKind } from '../servers/kinds.js';
import { launch, type RunningServer } from '../servers/launch.js';
import { BENCH_SKILLS_MODULE, REMOTE_SKILL } from '../servers/remote.js';
import { percentile, sleep } from '../stats.js';
import { tempPath } from '../temp.js';

/**
 * Idle workers (docs/workers.md, "Claim (long poll)"): many workers long-polling one server that has
 * no task for them. What each waiting claim costs it in memory, whether they cost CPU while they wait
 * (they should not: a promise and a timer each), and how soon a task created then reaches one of them.
 * The node:http floor holds the same requests (a timer each, answered `{"jobs":[]}` when it runs out):
 * what node:http itself holds per waiting request and connection.
 */
export const WORKERS_KINDS = ['floor', 'taskhandle'] as const satisfies readonly ServerKind[];
export type WorkersKind = (typeof WORKERS_KINDS)[number];

/** The warm-up's claims wait this long, then are answered empty. */
export const WARM_WAIT_MS = 100;

export interface WorkersOptions {
  /** Claims held at once, each on its own connection, each claiming again once answered. */
  claims: number;
  /** Each claim's `waitMs`: longer than the measured wait, so that none is answered during it. */
  waitMs: number;
  /** The quiet window and the waiting window, each this long. */
  durationS: number;
  /** Rest after the warm-up, and time for the claims to reach the server before the wait is measured. */
  settleMs: number;
  /** Then wait up to this long for the server's RSS to hold still for 10 s (0: not at all). */
  rssSettleS: number;
  /** Tasks created one at a time while the claims wait, each timed until a claim receives it. */
  creates: number;
  quietWaitS: number;
}

export interface WorkersResult {
  claims: number;
  waitMs: number;
  /** Claims still waiting (not answered) at the end of the measured wait. */
  waiting: number;
  /** Claims answered during the measured wait: 0 unless the server answers before `waitMs`. */
  answeredEarly: number;
  durationS: number;
  /** Server RSS after the quiet window (no connection open), and after the waiting window. */
  quietRssMb: number;
  waitingRssMb: number;
  /** (waiting RSS - quiet RSS) / claims: one waiting claim and its connection, and garbage. */
  bytesPerClaim: number;
  /**
   * The live V8 heap (a heap snapshot's total, taken after a full GC) without the claims and with
   * them all waiting: what one waiting claim and its connection hold, without garbage.
   */
  heapMb: number;
  heapBytesPerClaim: number;
  /** Server CPU in cores over the quiet window and over the waiting window. */
  quietCpu: number;
  waitingCpu: number;
  /** The bench process (the claims' client) over the waiting window, in cores. */
  clientCpu: number;
  /**
   * taskhandle: from a create's start (POST /v1/jobs) to a waiting claim's answer holding that task,
   * and (`createdSamplesMs`) to the create's own answer, for each create.
   */
  createToClaim?: {
    n: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    samplesMs: number[];
    createdSamplesMs: number[];
  };
  error?: string;
}

interface ClaimedJob {
  taskId: string;
  lease: { token: string };
}

/** Starts the server (taskhandle with the bench's remote skill), then quiet, waiting, creating. */
export async function idleWorkers(kind: WorkersKind, o: WorkersOptions): Promise<WorkersResult> {
  const snapshots = tempPath(`heap-${kind}-${++launches}`);
  mkdirSync(snapshots, { recursive: true });
  // SIGUSR2 writes a heap snapshot (after a full GC) into `snapshots`; nothing else changes
  const nodeArgs = ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshots}`];
  const server =
    kind === 'floor'
      ? await launch('floor', { nodeArgs })
      : await launch('taskhandle', { nodeArgs, env: { SKILLS: BENCH_SKILLS_MODULE } });
  let pool: ClaimPool | undefined;
  try {
    // Warm-up on connections closed afterwards: what serving claims warms (code, buffers) is in the
    // baseline; the connections themselves are not, so that the growth is per worker: its
    // connection and its waiting claim.
    const warm = new ClaimPool(server.url, o.claims, WARM_WAIT_MS, true);
    await warm.done();
    if (warm.firstError) throw new Error(`the warm-up's claims: ${warm.firstError}`);
    await sleep(o.settleMs);
    // V8 shrinks the heap some seconds after the warm-up's garbage: in the baseline, not in the wait
    if (o.rssSettleS > 0) await rssSettled(server, o.rssSettleS);
    if (o.quietWaitS > 0) await waitForQuiet(o.quietWaitS, () => server.cpuSeconds(), 0.3);
    const quiet = await measureWindow(server, o.durationS);

    pool = new ClaimPool(server.url, o.claims, o.waitMs, false);
    await pool.allSent();
    await sleep(o.settleMs); // every claim has reached the server, looked once and is waiting
    const answered0 = pool.answered;
    const waiting = await measureWindow(server, o.durationS);
    const answeredEarly = pool.answered - answered0;
    const stillWaiting = pool.open;

    const latencies: number[] = [];
    const createdIn: number[] = [];
    let error = pool.firstError;
    if (kind === 'taskhandle') {
      for (let i = 0; i < o.creates; i++) {
        try {
          const t = await createToClaim(server.url, pool);
          latencies.push(t.claimedMs);
          createdIn.push(t.createdMs);
        } catch (err) {
          error ??= `create ${i + 1} of ${o.creates}: ${(err as Error).message.split('\n')[0]}`;
          break;
        }
        await sleep(50);
      }
    }

    // The live heap without the claims and with them: snapshots force a full GC (and allocate a
    // lot), so they come after the RSS and CPU figures, on claims opened again.
    pool.stop();
    await sleep(o.settleMs);
    const heap0 = await liveHeapBytes(server, snapshots);
    pool = new ClaimPool(server.url, o.claims, o.waitMs, false);
    await pool.allSent();
    await sleep(o.settleMs);
    const heap1 = await liveHeapBytes(server, snapshots);
    error ??= pool.firstError;

    const crashed = server.crashed();
    return {
      claims: o.claims,
      waitMs: o.waitMs,
      waiting: stillWaiting,
      answeredEarly,
      durationS: waiting.wallS,
      quietRssMb: quiet.rss / 2 ** 20,
      waitingRssMb: waiting.rss / 2 ** 20,
      bytesPerClaim: (waiting.rss - quiet.rss) / o.claims,
      heapMb: heap0 / 2 ** 20,
      heapBytesPerClaim: (heap1 - heap0) / o.claims,
      quietCpu: quiet.cpu,
      waitingCpu: waiting.cpu,
      clientCpu: waiting.clientCpu,
      ...(kind === 'taskhandle'
        ? {
            createToClaim: {
              n: latencies.length,
              p50Ms: percentile(latencies, 50),
              p99Ms: percentile(latencies, 99),
              maxMs: Math.max(...latencies),
              samplesMs: latencies.map(round2),
              createdSamplesMs: createdIn.map(round2),
            },
          }
        : {}),
      ...(crashed || error ? { error: crashed ?? error } : {}),
    };
  } finally {
    pool?.stop();
    await server.stop();
    rmSync(snapshots, { recursive: true, force: true });
  }
}

let launches = 0;

/** Resolves once the server's RSS stayed within 512 KiB for 10 s (sampled every 500 ms), or after `maxS`. */
async function rssSettled(server: RunningServer, maxS: number): Promise<void> {
  const deadline = performance.now() + maxS * 1000;
  const samples: number[] = [];
  while (performance.now() < deadline) {
    samples.push(server.rssBytes());
    const last = samples.slice(-21);
    if (last.length === 21 && Math.max(...last) - Math.min(...last) < 512 * 1024) return;
    await sleep(500);
  }
}

/**
 * The server's live heap: the total self size of a heap snapshot, which V8 takes after a full GC
 * (SIGUSR2, --heapsnapshot-signal). The file is read once written whole, then removed.
 */
async function liveHeapBytes(server: RunningServer, dir: string): Promise<number> {
  const before = new Set(readdirSync(dir));
  process.kill(server.pids[0] as number, 'SIGUSR2');
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    await sleep(200);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    let snapshot: HeapSnapshot;
    try {
      snapshot = JSON.parse(readFileSync(join(dir, file), 'utf8')) as HeapSnapshot;
    } catch {
      continue; // not written whole yet
    }
    rmSync(join(dir, file));
    const fields = snapshot.snapshot.meta.node_fields;
    const self = fields.indexOf('self_size');
    let total = 0;
    for (let i = self; i < snapshot.nodes.length; i += fields.length) total += snapshot.nodes[i] as number;
    return total;
  }
  throw new Error('the server wrote no heap snapshot within 60 s');
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[] } };
  nodes: number[];
}

/** The server's CPU (cores) over `durationS`, its RSS at the end, and this process's CPU. */
async function measureWindow(server: RunningServer, durationS: number) {
  const cpu0 = server.cpuSeconds();
  const client0 = processCpuSeconds(process.pid);
  const t0 = performance.now();
  await sleep(durationS * 1000);
  const wallS = (performance.now() - t0) / 1000;
  return {
    wallS,
    cpu: (server.cpuSeconds() - cpu0) / wallS,
    clientCpu: (processCpuSeconds(process.pid) - client0) / wallS,
    rss: server.rssBytes(),
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * One create (POST /v1/jobs of the remote skill), timed until a waiting claim gets it (and until its
 * own answer); then completed.
 */
async function createToClaim(
  url: string,
  pool: ClaimPool,
): Promise<{ claimedMs: number; createdMs: number }> {
  const t0 = performance.now();
  const claimed = pool.nextJob();
  const created = await post(pool.agent, url, '/v1/jobs', { skill: REMOTE_SKILL, input: {} });
  const createdMs = performance.now() - t0;
  if (created.status !== 202) throw new Error(`POST /v1/jobs answered ${created.status}`);
  const job = await Promise.race([
    claimed,
    sleep(10_000).then(() => {
      throw new Error('no waiting claim got the task within 10 s');
    }),
  ]);
  const ms = job.at - t0;
  if (job.taskId !== created.body.taskId) throw new Error(`a claim got ${job.taskId}, not the task created`);
  const done = await post(
    pool.agent,
    url,
    `/v1/workers/jobs/${encodeURIComponent(job.taskId)}/complete`,
    { message: 'done' },
    { 'Lease-Token': job.token },
  );
  if (done.status !== 200) throw new Error(`complete answered ${done.status}`);
  return { claimedMs: ms, createdMs };
}

/**
 * `claims` long polls, each on its own keep-alive connection, each claiming again once answered
 * (`once`: the warm-up, each claims once). Jobs the claims get are handed to {@link ClaimPool.nextJob}.
 */
class ClaimPool {
  readonly agent: Agent;
  answered = 0;
  open = 0;
  firstError: string | undefined;
  #sent = 0;
  readonly #claims: number;
  readonly #stopping = new AbortController();
  readonly #loops: Promise<void>[];
  #onJob: ((job: { taskId: string; token: string; at: number }) => void) | undefined;

  constructor(url: string, claims: number, waitMs: number, once: boolean) {
    this.#claims = claims;
    // one signal stops every claim: a listener each, not a leak
    setMaxListeners(claims + 10, this.#stopping.signal);
    this.agent = new Agent({ keepAlive: true, maxSockets: claims + 8 });
    this.#loops = Array.from({ length: claims }, async (_, i) => {
      const claim = { skills: [REMOTE_SKILL], max: 1, waitMs, worker: `idle-${i + 1}` };
      do {
        this.open++;
        try {
          const answer = await post(
            this.agent,
            url,
            '/v1/workers/claims',
            claim,
            {},
            this.#stopping.signal,
            () => {
              this.#sent++;
            },
          );
          const at = performance.now();
          this.answered++;
          if (answer.status !== 200) throw new Error(`a claim answered ${answer.status}`);
          for (const job of (answer.body.jobs ?? []) as ClaimedJob[])
            this.#onJob?.({ taskId: job.taskId, token: job.lease.token, at });
        } catch (err) {
          if (this.#stopping.signal.aborted) return;
          this.firstError ??= (err as Error).message.split('\n')[0];
          await sleep(100);
        } finally {
          this.open--;
        }
      } while (!once && !this.#stopping.signal.aborted);
    });
  }

  /** Resolves once every claim has been sent once. */
  async allSent(): Promise<void> {
    while (this.#sent < this.#claims) await sleep(10);
  }

  /** Every claim has been answered (the warm-up); its connections are closed. */
  async done(): Promise<void> {
    await Promise.all(this.#loops);
    this.agent.destroy();
  }

  /** The next job a claim gets, with the time its answer arrived. */
  nextJob(): Promise<{ taskId: string; token: string; at: number }> {
    return new Promise((resolve) => {
      this.#onJob = (job) => {
        this.#onJob = undefined;
        resolve(job);
      };
    });
  }

  stop(): void {
    this.#stopping.abort();
    this.agent.destroy();
  }
}

// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely, checked where used
type Answer = { status: number; body: Record<string, any> };

function post(
  agent: Agent,
  url: string,
  path: string,
  json: unknown,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
  onSent?: () => void,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, url),
      {
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers },
        ...(signal ? { signal } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} });
          } catch (err) {
            reject(err);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(json), onSent);
  });
}
