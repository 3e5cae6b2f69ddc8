import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { writeKeysFile } from '../api-keys.js';
import type { BuildUp, Retried } from '../flood-bounds.js';
import { type Paced, paced } from '../paced.js';
import { cpuSeconds, machineBusySeconds, waitForQuiet } from '../proc-stats.js';
import { createTasks, LONG_JOB, sendBody } from '../rpc.js';
import { launch, type ServerEnv } from '../servers/launch.js';
import { percentile } from '../stats.js';
import { roundRobin } from './poll.js';

/**
 * A flood by one API key beside a quiet tenant (issue 29): what the per-principal bounds leave of
 * another tenant's create and poll latency. Per round, three fresh servers (taskhandle on SQLite,
 * 127.0.0.1) with the same two keys and bounds; on each the quiet tenant creates `pollTasks`
 * hour-long jobs, then sends `perS` non-blocking SendMessage and `perS` GetTask of those tasks a
 * second, each timed (paced.ts), for `warmupS` unmeasured and `durationS` measured: alone (`quiet`);
 * beside the flooder (flooder.ts, its own process) once it has taken every bound and keeps asking for
 * more (`flooded`, the issue's case); and beside the flooder holding every bound without asking for
 * more (`held`), which tells what its retries cost from what the streams, webhooks and tasks it holds
 * cost. The phases' order rotates by round.
 */
export interface FloodOptions {
  rounds: number;
  /** The quiet tenant's creates a second, and its polls a second. */
  perS: number;
  warmupS: number;
  durationS: number;
  /** Tasks the quiet tenant creates before it is measured, polled round-robin. */
  pollTasks: number;
  /** MAX_ACTIVE_TASKS of every server. */
  maxActiveTasks: number;
  /** Tasks the flooder gives as many webhooks as MAX_PUSH_CONFIGS lets each have. */
  pushTasks: number;
  /** The flooder's requests in flight per bound once refused (flooded phase), each sent as the last is answered. */
  retryInFlight: number;
  /** Before each measurement, wait up to this long for the machine to go idle. */
  quietWaitS: number;
}

/** The quiet tenant's requests on one server, and what the processes used meanwhile. */
export interface FloodPhase {
  /** Beside the flood: what the flooder took, and what its retries (if any) got meanwhile. */
  flood?: { built: BuildUp; retried: Retried };
  /** The quiet tenant's answered creates and polls: how many, and their latency percentiles. */
  create: Latency;
  poll: Latency;
  failures: number;
  firstFailure?: string;
  /** Cores used over the measurement by the server, the flooder's process, this process, the rest. */
  serverCpu: number;
  flooderCpu: number;
  clientCpu: number;
  otherCpu: number;
  serverRssMb: number;
}

export const FLOOD_PHASES = ['quiet', 'held', 'flooded'] as const;
export type FloodPhaseName = (typeof FLOOD_PHASES)[number];
export type FloodRound = Record<FloodPhaseName, FloodPhase>;

export interface FloodResult {
  /** The bounds every server ran with. */
  bounds: Bounds;
  options: FloodOptions;
  rounds: FloodRound[];
}

export interface Latency {
  n: number;
  p50Ms: number;
  p99Ms: number;
}

interface Bounds {
  maxActiveTasks: number;
  maxStreams: number;
  maxPushConfigs: number;
}

/**
 * The server's own defaults of the bounds a flood takes, as docs/settings.md gives them
 * (MAX_ACTIVE_TASKS, MAX_STREAMS, MAX_PUSH_CONFIGS): what a server deployed with its defaults lets
 * one key hold. The bench sees taskhandle from outside, so it states them; the flood leaves the
 * last two unset and the smoke run fails where the server refused at other counts.
 */
export const DEFAULT_BOUNDS: Bounds = { maxActiveTasks: 10_000, maxStreams: 100, maxPushConfigs: 10 };

const FLOODER = fileURLToPath(new URL('../flooder.js', import.meta.url));
/** Longest the flooder may take to reach every bound (10,000 creates, 11,000 webhook configs). */
const BUILD_TIMEOUT_MS = 300_000;

export async function flood(o: FloodOptions): Promise<FloodResult> {
  const { file, headers } = writeKeysFile('flood', { flooder: 'flooder', quiet: 'quiet' });
  const bounds = { ...DEFAULT_BOUNDS, maxActiveTasks: o.maxActiveTasks };
  const env = {
    API_KEYS_FILE: file,
    // The bounds are what is measured: the task cap as the run sizes it, and the server's own
    // defaults of the others, where the bench's other servers lift MAX_STREAMS (launch.ts). The smoke
    // run checks that the flooder was refused at DEFAULT_BOUNDS, so a changed default shows there.
    MAX_ACTIVE_TASKS: String(bounds.maxActiveTasks),
    MAX_STREAMS: undefined,
    // the flooder's webhook receiver is on loopback, which webhooks may not reach by default
    PUSH_ALLOW: '127.0.0.1',
  };
  const rounds: FloodRound[] = [];
  for (let i = 0; i < o.rounds; i++) {
    const round: Partial<FloodRound> = {};
    for (let j = 0; j < FLOOD_PHASES.length; j++) {
      const name = FLOOD_PHASES[(i + j) % FLOOD_PHASES.length] as FloodPhaseName;
      const retryInFlight = { quiet: undefined, held: 0, flooded: o.retryInFlight }[name];
      round[name] = await phase(retryInFlight, o, env, headers);
    }
    rounds.push(round as FloodRound);
  }
  return { bounds, options: o, rounds };
}

/** One server: the quiet tenant measured alone (`retryInFlight` undefined), or beside the flooder. */
async function phase(
  retryInFlight: number | undefined,
  o: FloodOptions,
  env: ServerEnv,
  headers: Record<'flooder' | 'quiet', Record<string, string>>,
): Promise<FloodPhase> {
  const server = await launch('taskhandle', { env });
  let flooder: Flooder | undefined;
  try {
    // first, so that its jobs hold the runner's slots and send the events its streams and webhooks carry
    if (retryInFlight !== undefined)
      flooder = await startFlooder(
        server.url,
        headers.flooder.Authorization as string,
        o.pushTasks,
        retryInFlight,
      );
    const ids = await createTasks(server.url, o.pollTasks, LONG_JOB, 32, headers.quiet);
    const url = server.url;
    const load = (s: number) =>
      Promise.all([
        paced(url, headers.quiet, sendBody(), o.perS, s),
        paced(url, headers.quiet, roundRobin(ids), o.perS, s),
      ]);
    const flooderCpu = () => flooder?.cpuSeconds() ?? 0;
    if (o.quietWaitS > 0) await waitForQuiet(o.quietWaitS, () => server.cpuSeconds() + flooderCpu(), 0.3);
    if (o.warmupS > 0) await load(o.warmupS);
    const server0 = server.cpuSeconds();
    const flooder0 = flooderCpu();
    const client0 = process.cpuUsage();
    const machine0 = machineBusySeconds();
    const t0 = performance.now();
    const [create, poll] = await load(o.durationS);
    const wall = (performance.now() - t0) / 1000;
    const serverCpu = (server.cpuSeconds() - server0) / wall;
    const flooderUsed = (flooderCpu() - flooder0) / wall;
    const client = process.cpuUsage(client0);
    const clientCpu = (client.user + client.system) / 1e6 / wall;
    const machine = (machineBusySeconds() - machine0) / wall;
    const serverRssMb = server.rssBytes() / 2 ** 20;
    const retried = await flooder?.stop();
    const crash = server.crashed();
    if (crash) throw new Error(crash);
    const firstFailure = create.firstFailure ?? poll.firstFailure;
    const latency = ({ samplesMs }: Paced): Latency => ({
      n: samplesMs.length,
      p50Ms: percentile(samplesMs, 50),
      p99Ms: percentile(samplesMs, 99),
    });
    return {
      ...(flooder && retried ? { flood: { built: flooder.built, retried } } : {}),
      create: latency(create),
      poll: latency(poll),
      failures: create.failures + poll.failures,
      ...(firstFailure ? { firstFailure } : {}),
      serverCpu,
      flooderCpu: flooderUsed,
      clientCpu,
      otherCpu: Math.max(0, machine - serverCpu - flooderUsed - clientCpu),
      serverRssMb,
    };
  } finally {
    flooder?.kill();
    await server.stop();
  }
}

/** The flooder's process once it holds every bound. */
interface Flooder {
  built: BuildUp;
  cpuSeconds(): number;
  /** Ends its retries; resolves with what they got. */
  stop(): Promise<Retried>;
  kill(): void;
}

async function startFlooder(
  url: string,
  auth: string,
  pushTasks: number,
  retryInFlight: number,
): Promise<Flooder> {
  const args = ['--url', url, '--push-tasks', String(pushTasks), '--retry-in-flight', String(retryInFlight)];
  const child = fork(FLOODER, args, {
    env: { ...process.env, FLOODER_AUTH: auth },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const next = <T>(key: 'ready' | 'done', timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => end(new Error(`the flooder sent no ${key} within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      const onMessage = (m: Record<string, T>) => {
        if (key in m) end(undefined, m[key] as T);
      };
      const onExit = (code: number | null) =>
        end(new Error(`the flooder exited (${code}) before ${key}: ${stderr.trim()}`));
      const end = (err?: Error, value?: T) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve(value as T);
      };
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  try {
    const built = await next<BuildUp>('ready', BUILD_TIMEOUT_MS);
    const pid = child.pid as number;
    return {
      built,
      cpuSeconds: () => cpuSeconds(pid),
      stop: () => {
        const done = next<Retried>('done', 30_000);
        child.send('stop');
        return done;
      },
      kill: () => child.kill('SIGKILL'),
    };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}
