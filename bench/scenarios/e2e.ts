import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';
import { setTimeout as wait } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
import { makeWorkerUtils } from 'graphile-worker';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { dropSchema, freshSchema } from '../postgres.js';
import { cpuSeconds, machineBusySeconds, waitForQuiet } from '../proc-stats.js';
import { call, getBody, RPC_HEADERS, sendBody, sendStreamBody, subscribeBody } from '../rpc.js';
import type { ServerKind } from '../servers/kinds.js';
import { launch, type RunningServer } from '../servers/launch.js';
import { configuredPostgres } from '../servers/postgres-cluster.js';
import {
  BENCH_SKILLS_MODULE,
  LOCAL_JOB,
  REMOTE_JOB,
  startWorker,
  type WorkerProcess,
  type WorkerStats,
} from '../servers/remote.js';
import { percentile } from '../stats.js';
import { INSTANT_EXPORT } from './push.js';

/** The A2A servers of the end-to-end scenario, and pg-boss and graphile-worker beside them. */
export const E2E_SERVERS = [
  'sdk-memory',
  'taskhandle',
  'taskhandle-pg',
] as const satisfies readonly ServerKind[];
/**
 * taskhandle with the job's skill remote (docs/workers.md): the same server with the bench's skills
 * module loaded (SKILLS), and one worker process (runWorker, 32 jobs at once) that completes each job
 * at once. Each is measured beside its twin: the same server running the same job in process (the
 * module's in-process skill, which also completes at once with the same message), so that the two
 * differ only in where the job runs. The `export` rows write a one-row CSV artifact as well.
 */
export const E2E_REMOTE = {
  'taskhandle-remote': 'taskhandle-local',
  'taskhandle-pg-remote': 'taskhandle-pg-local',
} as const;
export type E2eRemoteKind = keyof typeof E2E_REMOTE;
/** The in-process twins of the remote kinds, on their server kind. */
const E2E_LOCAL = {
  'taskhandle-local': 'taskhandle',
  'taskhandle-pg-local': 'taskhandle-pg',
} as const satisfies Record<(typeof E2E_REMOTE)[E2eRemoteKind], (typeof E2E_SERVERS)[number]>;
type E2eLocalKind = keyof typeof E2E_LOCAL;
/**
 * The same server and job as its twin, each job one SendStreamingMessage read to its terminal
 * event instead of a SendMessage and a SubscribeToTask: what a caller that waits for the result
 * anyway pays (one request a job, against two or three).
 */
const E2E_SEND_STREAM = {
  'taskhandle-send-stream': 'taskhandle',
  'taskhandle-pg-send-stream': 'taskhandle-pg',
} as const satisfies Record<string, (typeof E2E_SERVERS)[number]>;
type E2eSendStreamKind = keyof typeof E2E_SEND_STREAM;
export const E2E_KINDS = [
  'sdk-memory',
  'taskhandle',
  'taskhandle-send-stream',
  'taskhandle-local',
  'taskhandle-remote',
  'taskhandle-pg',
  'taskhandle-pg-send-stream',
  'taskhandle-pg-local',
  'taskhandle-pg-remote',
  'pg-boss',
  'graphile-worker',
] as const;
export type E2eKind = (typeof E2E_KINDS)[number];
/** The kinds that need PostgreSQL (skipped where none answers). */
export const E2E_POSTGRES: readonly E2eKind[] = [
  'taskhandle-pg',
  'taskhandle-pg-send-stream',
  'taskhandle-pg-local',
  'taskhandle-pg-remote',
  'pg-boss',
  'graphile-worker',
];
/** The PostgreSQL job queues measured beside taskhandle: no A2A, their own client library. */
const QUEUES = ['pg-boss', 'graphile-worker'] as const;
type QueueKind = (typeof QUEUES)[number];

export const isRemoteE2e = (k: E2eKind): k is E2eRemoteKind => Object.hasOwn(E2E_REMOTE, k);
const isLocalE2e = (k: E2eKind): k is E2eLocalKind => Object.hasOwn(E2E_LOCAL, k);
const isSendStreamE2e = (k: E2eKind): k is E2eSendStreamKind => Object.hasOwn(E2E_SEND_STREAM, k);

export const E2E_LABELS: Record<E2eKind, string> = {
  'sdk-memory': '(b) SDK 1.3, InMemoryTaskStore',
  taskhandle: '(c) taskhandle, SQLite',
  'taskhandle-send-stream': '(c) taskhandle, SQLite, each job one SendStreamingMessage',
  'taskhandle-local': '(c) taskhandle, SQLite, no-op job in process',
  'taskhandle-remote': '(c) taskhandle, SQLite, no-op job on a remote worker',
  'taskhandle-pg': '(c) taskhandle, PostgreSQL, 1 instance',
  'taskhandle-pg-send-stream': '(c) taskhandle, PostgreSQL, 1 instance, each job one SendStreamingMessage',
  'taskhandle-pg-local': '(c) taskhandle, PostgreSQL, 1 instance, no-op job in process',
  'taskhandle-pg-remote': '(c) taskhandle, PostgreSQL, 1 instance, no-op job on a remote worker',
  'pg-boss': '(d) pg-boss 10.4.2, PostgreSQL',
  'graphile-worker': '(d) graphile-worker 0.17.3, PostgreSQL',
};

/** What each one promises once it has acknowledged a job, shown beside its numbers. */
export const E2E_DURABILITY: Record<E2eKind, string> = {
  'sdk-memory': 'none: tasks live in the process memory, lost with it',
  taskhandle: 'each create and transition fsynced (SQLite WAL, synchronous=FULL) before it is answered',
  'taskhandle-send-stream': 'as (c) SQLite',
  'taskhandle-local': 'as (c) SQLite',
  'taskhandle-remote':
    "as (c) SQLite: the claim (the lease) and the worker's complete are fsynced before they are answered",
  'taskhandle-pg':
    'each create and transition committed in PostgreSQL (synchronous_commit on) before it is answered',
  'taskhandle-pg-send-stream': 'as (c) PostgreSQL',
  'taskhandle-pg-local': 'as (c) PostgreSQL',
  'taskhandle-pg-remote':
    "as (c) PostgreSQL: the claim (the lease) and the worker's complete are committed before they are answered",
  'pg-boss': 'each send and completion committed in PostgreSQL (synchronous_commit on)',
  'graphile-worker':
    'each addJob and completion committed in PostgreSQL (synchronous_commit on); a completed job is deleted',
};

/** The remote kinds' worker process: jobs it runs at once (runWorker's concurrency). */
export const REMOTE_CONCURRENCY = 32;

/** pg-boss, which has no completion stream: between two reads of a job not done yet (getJobById). */
export const COLLECT_INTERVAL_MS = 5;
/** pg-boss's worker: work() loops, jobs fetched per poll (its polling interval: 0.5 s, its minimum). */
export const PGBOSS_WORKERS = 4;
export const PGBOSS_BATCH = 32;
/** graphile-worker's worker: jobs at once, as its performance page configures it (concurrentJobs 24). */
export const GRAPHILE_CONCURRENCY = 24;

export interface E2eOptions {
  jobs: number;
  /** Jobs between create and collected at once (a closed loop: a worker creates the next once one is collected). */
  inFlight: number;
  timeoutS: number;
  quietWaitS: number;
  /** By hand (profiles, A/B pairs): what to change from the kind as the bench runs it. */
  variant?: E2eVariant;
}

export interface E2eResult {
  jobs: number;
  completed: number;
  /** Completed jobs per second, from the first create to the last collected. */
  perS: number;
  /** From the create's start to the read that saw the job completed. */
  p50Ms: number;
  p99Ms: number;
  /**
   * CPU of the server (or pg-boss worker) processes, in cores, over the run; the remote kinds: the
   * server and its worker process together. PostgreSQL's not counted.
   */
  serverCpu: number;
  /** The remote kinds: the worker process's share of `serverCpu`, in cores. */
  workerCpu?: number;
  /** This process (the creates and the collecting streams; pg-boss's send and reads), in cores. */
  clientCpu?: number;
  /** Every other process on the machine over the run, in cores (PostgreSQL's included). */
  otherCpu?: number;
  /**
   * The remote kinds, as the worker process timed them: claims answered, jobs completed per claim,
   * and how long a claim and a complete took (from the call to the answer; a claim's time includes
   * its wait on the server when no task was queued).
   */
  worker?: {
    claims: number;
    jobsPerClaim: number;
    claimP50Ms: number;
    claimP99Ms: number;
    completeP50Ms: number;
    completeP99Ms: number;
  };
  error?: string;
}

/** Changes to an A2A kind for measurements made by hand; the bench's own runs use none. */
export interface E2eVariant {
  /** Extra `node` flags for the server's processes and the remote kinds' worker (e.g. --cpu-prof). */
  serverNodeArgs?: string[];
  workerNodeArgs?: string[];
  /** Extra settings of the server (e.g. RUNNER_CONCURRENCY, SKILLS). */
  serverEnv?: Record<string, string>;
  /** The remote kinds' worker: jobs at once (default REMOTE_CONCURRENCY). */
  workerConcurrency?: number;
  /** The SendMessage's data part (the job's skill and input) instead of the kind's own. */
  job?: object;
}

/** One way of creating a job and reading whether it is done. */
interface Jobs {
  create(): Promise<string>;
  done(id: string): Promise<boolean>;
  cpuSeconds(): number;
  /** The remote kinds: the worker process's CPU seconds (counted in cpuSeconds too). */
  workerCpuSeconds?(): number;
  /** The remote kinds, once stopped: what the worker process timed. */
  workerStats?(): WorkerStats | undefined;
  stop(): Promise<void>;
}

/**
 * N jobs that complete at once, `inFlight` at a time, each created and then collected once
 * completed: completed jobs per second and the time from create to completed. Over A2A: a
 * non-blocking SendMessage, then one SubscribeToTask read to its terminal event; pg-boss: send(),
 * then getJobById() every 5 ms, while its worker process completes the jobs. The remote kinds: as
 * over A2A, with a job of the remote skill, which a worker process claims and completes. The
 * send-stream kinds: one SendStreamingMessage a job, read to its terminal event.
 */
export async function endToEnd(kind: E2eKind, o: E2eOptions): Promise<E2eResult> {
  const jobs =
    kind === 'pg-boss'
      ? await pgBossJobs()
      : kind === 'graphile-worker'
        ? await graphileJobs()
        : await a2aJobs(kind, o);
  let result: E2eResult;
  try {
    if (o.quietWaitS > 0) await waitForQuiet(o.quietWaitS, () => jobs.cpuSeconds(), 0.3);
    const latencies: number[] = [];
    let next = 0;
    let firstError: string | undefined;
    let failed = 0;
    const deadline = Date.now() + o.timeoutS * 1000;
    const worker = async () => {
      while (next < o.jobs && Date.now() < deadline) {
        next++;
        const start = performance.now();
        try {
          const id = await jobs.create();
          while (!(await jobs.done(id))) {
            if (Date.now() > deadline) throw new Error(`not completed within ${o.timeoutS} s`);
            await wait(COLLECT_INTERVAL_MS);
          }
          latencies.push(performance.now() - start);
        } catch (err) {
          failed++;
          firstError ??= (err as Error).message.split('\n')[0];
        }
      }
    };
    const cpu0 = jobs.cpuSeconds();
    const worker0 = jobs.workerCpuSeconds?.();
    const client0 = cpuSeconds(process.pid);
    const machine0 = machineBusySeconds();
    const start = performance.now();
    await Promise.all(Array.from({ length: Math.min(o.inFlight, o.jobs) }, worker));
    const wallS = (performance.now() - start) / 1000;
    const serverS = jobs.cpuSeconds() - cpu0;
    const clientS = cpuSeconds(process.pid) - client0;
    const errors = [
      ...(failed ? [`${failed} of ${o.jobs} jobs failed (${firstError})`] : []),
      ...(latencies.length + failed < o.jobs
        ? [`only ${latencies.length} of ${o.jobs} jobs ran before the timeout`]
        : []),
    ];
    result = {
      jobs: o.jobs,
      completed: latencies.length,
      perS: latencies.length / wallS,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      serverCpu: serverS / wallS,
      clientCpu: clientS / wallS,
      otherCpu: Math.max(0, machineBusySeconds() - machine0 - serverS - clientS) / wallS,
      ...(jobs.workerCpuSeconds && worker0 !== undefined
        ? { workerCpu: (jobs.workerCpuSeconds() - worker0) / wallS }
        : {}),
      ...(errors.length ? { error: errors.join('; ') } : {}),
    };
  } finally {
    await jobs.stop();
  }
  const stats = jobs.workerStats?.();
  if (stats?.claims.length) {
    result.worker = {
      claims: stats.claims.length,
      jobsPerClaim: stats.completes.length / stats.claims.length,
      claimP50Ms: percentile(stats.claims, 50),
      claimP99Ms: percentile(stats.claims, 99),
      completeP50Ms: percentile(stats.completes, 50),
      completeP99Ms: percentile(stats.completes, 99),
    };
  }
  return result;
}

async function a2aJobs(kind: Exclude<E2eKind, QueueKind>, o: E2eOptions): Promise<Jobs> {
  const v = o.variant ?? {};
  const nodeArgs = v.serverNodeArgs ?? [];
  if (isSendStreamE2e(kind)) {
    const server = await launch(E2E_SEND_STREAM[kind], { nodeArgs, env: v.serverEnv ?? {} });
    return sendStreamOn(server, v.job ?? INSTANT_EXPORT);
  }
  if (!isRemoteE2e(kind) && !isLocalE2e(kind))
    return a2aOn(await launch(kind, { nodeArgs, env: v.serverEnv ?? {} }), v.job ?? INSTANT_EXPORT);
  const env = { SKILLS: BENCH_SKILLS_MODULE, ...v.serverEnv };
  if (isLocalE2e(kind)) return a2aOn(await launch(E2E_LOCAL[kind], { nodeArgs, env }), v.job ?? LOCAL_JOB);
  const server = await launch(E2E_LOCAL[E2E_REMOTE[kind]], { nodeArgs, env });
  let worker: WorkerProcess;
  try {
    worker = await startWorker(server.url, v.workerConcurrency ?? REMOTE_CONCURRENCY, v.workerNodeArgs);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const jobs = a2aOn(server, v.job ?? REMOTE_JOB);
  let stats: WorkerStats | undefined;
  return {
    ...jobs,
    async done(id) {
      const crashed = worker.crashed();
      if (crashed) throw new Error(crashed);
      return jobs.done(id);
    },
    cpuSeconds: () => server.cpuSeconds() + worker.cpuSeconds(),
    workerCpuSeconds: () => worker.cpuSeconds(),
    workerStats: () => stats,
    async stop() {
      stats = await worker.stop();
      await server.stop();
    },
  };
}

/** Jobs over A2A: `part` is the SendMessage's data part (the job's skill and input). */
function a2aOn(server: RunningServer, part: object): Jobs {
  const body = sendBody(part);
  const state = async (id: string) => (await call(server.url, getBody(id))).result?.status?.state;
  return {
    async create() {
      const id = (await call(server.url, body())).result?.task?.id;
      if (typeof id !== 'string') throw new Error('SendMessage returned no task');
      return id;
    },
    // one SubscribeToTask until its terminal event; a task already terminal (refused, or a stream
    // that ends without one) is read once with GetTask
    async done(id) {
      const ended = (await terminalState(server.url, id)) ?? (await state(id));
      if (ended === 'TASK_STATE_COMPLETED') return true;
      if (typeof ended === 'string' && TERMINAL.has(ended)) throw new Error(`the job ended ${ended}`);
      return false;
    },
    cpuSeconds: () => server.cpuSeconds(),
    stop: () => server.stop(),
  };
}

/**
 * Jobs over A2A, each one SendStreamingMessage: create() reads its stream to the terminal event (the
 * task's id is in its first), so a job is collected by the time create() returns.
 */
function sendStreamOn(server: RunningServer, part: object): Jobs {
  const body = sendStreamBody(part);
  return {
    async create() {
      const { taskId, state } = await streamToEnd(server.url, body());
      if (state === undefined)
        throw new Error(`the stream of task ${taskId ?? '(none)'} ended before its job did`);
      if (state !== 'TASK_STATE_COMPLETED') throw new Error(`the job ended ${state}`);
      return taskId ?? '';
    },
    done: async () => true,
    cpuSeconds: () => server.cpuSeconds(),
    stop: () => server.stop(),
  };
}

const TERMINAL = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);
const streams = new Agent({ keepAlive: true, maxSockets: 256 });

/** Reads a SubscribeToTask stream until a terminal state; undefined if it ends (or is refused) before one. */
async function terminalState(url: string, taskId: string): Promise<string | undefined> {
  return (await streamToEnd(url, subscribeBody(taskId))).state;
}

/**
 * POSTs a streaming JSON-RPC request and reads its SSE stream until a terminal state (undefined if
 * it ends, or is refused, before one), with the id of the task its first event shows.
 */
function streamToEnd(url: string, body: string): Promise<{ taskId?: string; state?: string }> {
  return new Promise((resolve) => {
    let settled = false;
    let taskId: string | undefined;
    const end = (state: string | undefined) => {
      if (settled) return;
      settled = true;
      resolve({ taskId, state });
      req.destroy();
    };
    const parser = createParser({
      onEvent: (event) => {
        taskId ??= taskIdOf(event.data);
        const m = /"state":"(TASK_STATE_[A-Z_]+)"/.exec(event.data);
        if (m?.[1] && TERMINAL.has(m[1])) end(m[1]);
      },
    });
    const req = request(url, { method: 'POST', agent: streams, headers: RPC_HEADERS }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.feed(chunk));
      res.on('end', () => end(undefined));
      res.on('error', () => end(undefined));
    });
    req.on('error', () => end(undefined));
    req.end(body);
  });
}

/** The task id of a stream's event: its task's `id`, or a status or artifact update's `taskId`. */
function taskIdOf(data: string): string | undefined {
  const result = (JSON.parse(data) as { result?: Record<string, { id?: string; taskId?: string }> }).result;
  const event = result && Object.values(result)[0];
  return event?.taskId ?? event?.id;
}

const PGBOSS_WORKER = fileURLToPath(new URL('../servers/pgboss-worker.js', import.meta.url));
const GRAPHILE_WORKER = fileURLToPath(new URL('../servers/graphile-worker.js', import.meta.url));

/** A queue's worker process (bench/servers/*-worker.js), once it has printed `ready`. */
interface QueueWorker {
  cpuSeconds(): number;
  stop(): Promise<void>;
}

async function startQueueWorker(script: string, args: string[]): Promise<QueueWorker> {
  const worker = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: worker.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (line === 'ready') resolve();
    });
    void exited.then(() => reject(new Error(`${script}: the worker exited before it was ready`)));
  });
  const pid = worker.pid as number;
  return {
    cpuSeconds: () => cpuSeconds(pid),
    async stop() {
      worker.kill('SIGTERM');
      await Promise.race([exited, wait(5000).then(() => worker.kill('SIGKILL'))]);
    },
  };
}

function postgresOrThrow(kind: QueueKind): string {
  const url = configuredPostgres();
  if (!url) throw new Error(`${kind}: no PostgreSQL configured for this run`);
  return url;
}

async function pgBossJobs(): Promise<Jobs> {
  const url = postgresOrThrow('pg-boss');
  const schema = freshSchema();
  const queue = 'e2e';
  const boss = new PgBoss({ connectionString: url, schema, supervise: false, schedule: false, max: 32 });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue(queue);
  const worker = await startQueueWorker(PGBOSS_WORKER, [
    '--url',
    url,
    '--schema',
    schema,
    '--queue',
    queue,
    '--workers',
    String(PGBOSS_WORKERS),
    '--batch',
    String(PGBOSS_BATCH),
  ]);
  return {
    async create() {
      const id = await boss.send(queue, {});
      if (!id) throw new Error('pg-boss send returned no id');
      return id;
    },
    async done(id) {
      const job = await boss.getJobById(queue, id);
      if (job?.state === 'completed') return true;
      if (job?.state === 'failed' || job?.state === 'cancelled')
        throw new Error(`the job ended ${job.state}`);
      return false;
    },
    cpuSeconds: () => worker.cpuSeconds(),
    async stop() {
      await worker.stop();
      await boss.stop({ graceful: false, wait: true });
      await dropSchema(url, schema);
    },
  };
}

/**
 * graphile-worker: `addJob` through its WorkerUtils (its migrations run first), then, as for
 * pg-boss, a read every COLLECT_INTERVAL_MS until the job is done. graphile-worker keeps no completed
 * jobs (a completed job's row is deleted), so done = its row is gone; a row with an error is a failure.
 */
async function graphileJobs(): Promise<Jobs> {
  const url = postgresOrThrow('graphile-worker');
  const schema = freshSchema();
  const task = 'e2e';
  const utils = await makeWorkerUtils({ connectionString: url, schema, maxPoolSize: 32 });
  await utils.migrate();
  const reads = new pg.Pool({ connectionString: url, max: 32 });
  const worker = await startQueueWorker(GRAPHILE_WORKER, [
    '--url',
    url,
    '--schema',
    schema,
    '--task',
    task,
    '--concurrency',
    String(GRAPHILE_CONCURRENCY),
  ]);
  const jobRow = `SELECT last_error FROM "${schema}"._private_jobs WHERE id = $1`;
  return {
    async create() {
      const job = await utils.addJob(task, {}, { maxAttempts: 1 });
      return String(job.id);
    },
    async done(id) {
      const { rows } = await reads.query<{ last_error: string | null }>(jobRow, [id]);
      if (!rows.length) return true;
      if (rows[0]?.last_error) throw new Error(`the job failed: ${rows[0].last_error}`);
      return false;
    },
    cpuSeconds: () => worker.cpuSeconds(),
    async stop() {
      await worker.stop();
      await reads.end();
      await utils.release();
      await dropSchema(url, schema);
    },
  };
}
