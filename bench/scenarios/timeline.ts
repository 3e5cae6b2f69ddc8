import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { cpuTimes } from '../proc-stats.js';
import { attribute, type CpuProfile, type Window } from '../profile-summary.js';
import { RPC_HEADERS } from '../rpc.js';
import { launch } from '../servers/launch.js';
import { median, percentile } from '../stats.js';
import { tempPath } from '../temp.js';
import { INSTANT_EXPORT } from './push.js';

/**
 * One job's life, step by step (issue 30): jobs created one at a time with SendStreamingMessage (the
 * create and its stream in one request, so that no step is hidden before a subscribe arrives), each
 * event's arrival timed at the client. The job is the end-to-end scenario's (`export` of one row: a
 * claim, an artifact, the completion), so its steps are: the task created (its first event), claimed
 * (`working`), its artifact written, completed. Server CPU is read over the whole series and divided
 * by the jobs: at one in flight nothing is shared between jobs, so it is what one job costs alone.
 * Then the same series again on a server under `node --cpu-prof` (a sample every 250 µs): its
 * main thread's busy samples are split by the windows between the events' arrivals (V8's profile
 * clock and process.hrtime are both CLOCK_MONOTONIC), which gives the CPU of each step; the timed
 * series runs without the profiler, which would slow it.
 */
export const TIMELINE_KINDS = ['taskhandle', 'taskhandle-pg'] as const;
export type TimelineKind = (typeof TIMELINE_KINDS)[number];

/** The steps, in the order a job takes them; each is timed from the request's start. */
export const STEPS = ['created', 'working', 'artifact', 'completed', 'closed'] as const;
export type Step = (typeof STEPS)[number];

export const STEP_LABELS: Record<CpuStep, string> = {
  created: 'create committed, first event (the task, submitted) arrived',
  working: 'claimed: the runner woke, its claim committed, `working` arrived',
  artifact: 'the job ran (task and log read), its ending committed: the artifact event arrived',
  completed: 'its completed status arrived (the same commit as the artifact, since 5ac85f1)',
  closed: 'the stream ended',
  between: 'after the stream ended, until the next job (the connection kept alive)',
};

/** A step's window, or the time from a job's stream ending to the next job's request. */
export type CpuStep = Step | 'between';
export const CPU_STEPS: readonly CpuStep[] = [...STEPS, 'between'];

export interface TimelineResult {
  jobs: number;
  /** Median ms from the request's start to each step (NaN where a job never showed it). */
  atMs: Record<Step, number>;
  /** 99th percentile of the whole life (to `completed`). */
  p99Ms: number;
  /** Server CPU per job, core-ms, over the series (all its threads), and of it the kernel's. */
  cpuMsPerJob: number;
  systemMsPerJob: number;
  /**
   * From the profiled series: the server's main-thread CPU a job in each step's window, µs (the
   * thread pool's fsyncs and other threads not included), and the functions with the most of it.
   */
  stepCpuUs?: Record<CpuStep, number>;
  stepTop?: Record<CpuStep, { name: string; us: number }[]>;
  error?: string;
}

/** One job's marks: CLOCK_MONOTONIC µs of its request's start and of each step's event. */
interface Marks {
  startUs: number;
  at: Partial<Record<Step, number>>;
}

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** One SendStreamingMessage, read to its end: when each step's event arrived. */
function oneJob(url: string): Promise<Marks> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendStreamingMessage',
    params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [INSTANT_EXPORT] } },
  });
  return new Promise((resolve, reject) => {
    const startUs = nowUs();
    const at: Partial<Record<Step, number>> = {};
    const mark = (step: Step) => {
      at[step] ??= nowUs();
    };
    const parser = createParser({
      onEvent: (event) => {
        const data = event.data;
        if (at.created === undefined) {
          mark('created');
          // A job that ended before its stream's first read shows its artifact in that snapshot.
          if (data.includes('"artifactId"')) mark('artifact');
        } else if (data.includes('"artifactUpdate"')) mark('artifact');
        else if (data.includes('TASK_STATE_WORKING')) mark('working');
        if (data.includes('TASK_STATE_COMPLETED')) mark('completed');
        else if (/TASK_STATE_(FAILED|CANCELED|REJECTED)/.test(data))
          reject(new Error(`the job ended: ${data.slice(0, 200)}`));
      },
    });
    const req = request(
      url,
      { method: 'POST', agent, headers: { ...RPC_HEADERS, Accept: 'text/event-stream' } },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => parser.feed(chunk));
        res.on('end', () => {
          mark('closed');
          resolve({ startUs, at });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export interface TimelineOptions {
  jobs: number;
  /** Jobs run first, not timed (the server's code warms up). */
  warmup: number;
  /** By hand (profiles): extra `node` flags for the server's processes, e.g. --cpu-prof. */
  nodeArgs?: string[];
}

export async function timeline(kind: TimelineKind, o: TimelineOptions): Promise<TimelineResult> {
  const server = await launch(kind, { nodeArgs: o.nodeArgs ?? [] });
  let result: TimelineResult;
  try {
    for (let i = 0; i < o.warmup; i++) await oneJob(server.url);
    const runs: Partial<Record<Step, number>>[] = [];
    let error: string | undefined;
    const times = () => {
      const all = server.pids.map(cpuTimes);
      return { user: all.reduce((n, t) => n + t.user, 0), system: all.reduce((n, t) => n + t.system, 0) };
    };
    const cpu0 = times();
    for (let i = 0; i < o.jobs; i++) {
      try {
        const { startUs, at } = await oneJob(server.url);
        runs.push(Object.fromEntries(Object.entries(at).map(([k, us]) => [k, (us - startUs) / 1000])));
      } catch (err) {
        error ??= (err as Error).message;
      }
    }
    const cpu1 = times();
    const perJob = (s: number) => (runs.length ? (s / runs.length) * 1000 : Number.NaN);
    const of = (step: Step) => runs.flatMap((r) => (r[step] === undefined ? [] : [r[step]]));
    const atMs = Object.fromEntries(STEPS.map((s) => [s, median(of(s))])) as Record<Step, number>;
    const missing = STEPS.filter((s) => s !== 'working' && of(s).length < runs.length);
    result = {
      jobs: runs.length,
      atMs,
      p99Ms: percentile(of('completed'), 99),
      cpuMsPerJob: perJob(cpu1.user + cpu1.system - cpu0.user - cpu0.system),
      systemMsPerJob: perJob(cpu1.system - cpu0.system),
      ...(error || missing.length
        ? {
            error: [error, missing.length ? `some jobs showed no ${missing.join(', ')}` : '']
              .filter(Boolean)
              .join('; '),
          }
        : {}),
    };
  } finally {
    await server.stop();
  }
  if (o.nodeArgs?.length) return result;
  return { ...result, ...(await profiledSteps(kind, o)) };
}

/** The same series under the profiler: the main thread's CPU a job in each step's window. */
async function profiledSteps(
  kind: TimelineKind,
  o: TimelineOptions,
): Promise<Pick<TimelineResult, 'stepCpuUs' | 'stepTop'>> {
  const dir = tempPath(`timeline-profile-${kind}`);
  const server = await launch(kind, {
    nodeArgs: ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${dir}`],
  });
  const jobs: Marks[] = [];
  try {
    for (let i = 0; i < o.warmup; i++) await oneJob(server.url);
    for (let i = 0; i < o.jobs; i++) jobs.push(await oneJob(server.url));
  } finally {
    await server.stop(60_000);
  }
  // The main thread's profile (thread 0 of the process; others are the runtime's own threads).
  const file = readdirSync(dir).find((f) => /\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (!file) throw new Error(`no main-thread CPU profile written in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  const windows: Window<CpuStep>[] = [];
  jobs.forEach((job, i) => {
    let from = job.startUs;
    for (const step of STEPS) {
      const to = job.at[step];
      if (to === undefined) continue;
      windows.push({ key: step, from, to });
      from = to;
    }
    const next = jobs[i + 1];
    if (next) windows.push({ key: 'between', from, to: next.startUs });
  });
  const split = attribute(profile, windows);
  const stepCpuUs = {} as Record<CpuStep, number>;
  const stepTop = {} as Record<CpuStep, { name: string; us: number }[]>;
  for (const step of CPU_STEPS) {
    const got = split.get(step);
    stepCpuUs[step] = (got?.busyUs ?? 0) / jobs.length;
    stepTop[step] = [...(got?.byFunction ?? [])]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP_FUNCTIONS)
      .map(([name, us]) => ({ name, us: us / jobs.length }));
  }
  return { stepCpuUs, stepTop };
}

/** Functions shown for each step's CPU. */
const TOP_FUNCTIONS = 4;
