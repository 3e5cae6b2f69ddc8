import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_POSTGRES_URL, shownUrl } from './postgres.js';
import { E2E_KINDS, type E2eKind } from './scenarios/e2e.js';
import { SERVER_KINDS, type ServerKind } from './servers/kinds.js';

export const SCENARIOS = [
  'create',
  'poll',
  'mcp',
  'fanout',
  'retained',
  'push',
  'e2e',
  'timeline',
  'artifact',
  'fairness',
  'flood',
  'workers',
] as const;
export type Scenario = (typeof SCENARIOS)[number];

export interface Options {
  smoke: boolean;
  rounds: number;
  durationS: number;
  warmupS: number;
  /** Before each measurement, wait up to this long for the (shared) machine to go idle. */
  quietWaitS: number;
  /** Measure again (at most this many times) when other processes disturbed a measurement. */
  retries: number;
  connections: number;
  scenarios: Set<Scenario>;
  /** The servers create and poll run on (default: every kind). */
  servers: Set<ServerKind>;
  /** Tasks created before the poll scenario, polled round-robin. */
  pollTasks: number;
  subscribers: number;
  /** Subscribers for the SDK reference (it may not cope with as many). */
  sdkSubscribers: number;
  fanoutTasks: number;
  retainedSizes: number[];
  /** Tasks made through HTTP before copying them in SQL up to each retained size. */
  templateTasks: number;
  /** Push: tasks that complete at once, each with its own webhook; creates in flight at once. */
  pushTasks: number;
  pushConcurrency: number;
  /** taskhandle's PUSH_CONCURRENCY in the push scenario. */
  serverPushConcurrency: number;
  /** Push: stop waiting for notifications this long after the first create. */
  pushTimeoutS: number;
  /** End to end: jobs that complete at once, created and collected `e2eInFlight` at a time. */
  e2eJobs: number;
  e2eInFlight: number;
  /** The end-to-end kinds to measure (default: every one; the PostgreSQL ones only where it answers). */
  e2eKinds: Set<E2eKind>;
  /** Large artifact: rows of the export (CSV, about 86 bytes a row) and rows per chunk. */
  artifactRows: number;
  artifactChunkRows: number;
  /** Idle workers: long-polling claims held at once, each claim's waitMs, creates timed until claimed. */
  idleClaims: number;
  idleWaitMs: number;
  idleCreates: number;
  profile: boolean;
  /** The database of the PostgreSQL kinds (a fresh schema per launch); undefined: skip them. */
  postgresUrl?: string;
  out: string;
  /** Re-render the report from the results a run saved, measuring nothing. */
  render?: string;
  /** The command line, as the report shows it (passwords masked). */
  argv: string[];
}

export const USAGE = `usage: npm run bench -- [options]

  --rounds N            interleaved rounds (default 3)
  --duration S          seconds per measurement (default 10), after --warmup S (default 2)
  --quiet-wait S        before each measurement, wait up to S s for the machine to go idle (default 20)
  --retries N           measure again, up to N times, when other processes took > 0.3 cores (default 2)
  --only LIST           scenarios, comma-separated: ${SCENARIOS.join(',')} (default all)
  --servers LIST        create and poll on these servers only, comma-separated (default all):
                        ${SERVER_KINDS.join(',')}
  --subscribers N       fan-out SSE subscribers (default 10000), --fanout-tasks M (default 100)
  --sdk-subscribers N   fan-out subscribers for the SDK reference (default: --subscribers)
  --retained-sizes A,B  stored tasks for the retained scenario (default 1000,1000000)
  --push-tasks N        push: tasks completing at once, one webhook each (default 5000)
  --push-concurrency N  push: taskhandle's PUSH_CONCURRENCY (default 32, its own default)
  --push-timeout S      push: stop waiting for notifications S s after the first create (default 120)
  --e2e-jobs N          e2e: jobs created, run and collected per server, 32 in flight (default 5000); also a
                        no-op job on a remote worker (one runWorker process, 32 at once) and the same in process
  --e2e-kinds LIST      e2e on these only, comma-separated (default all; the report's e2e section is then of
                        these alone): ${E2E_KINDS.join(',')}
  --idle-claims N       workers: long-polling claims held at once, no task for them (default 200), each
                        waiting 30 s; then --idle-creates M creates timed until a claim gets one (default 20)
  --artifact-rows N     artifact: rows of the large export (default 12500000: a 1.00 GiB CSV file)
  --no-profile          skip the CPU profiles of taskhandle
  --postgres URL|off    PostgreSQL for the taskhandle-pg kinds, a fresh schema per server
                        (default ${DEFAULT_POSTGRES_URL}; skipped with a log line if it does not answer in 2 s)
  --out FILE            report file (default bench/BENCHMARKS.md; with --smoke a temp file); the results go
                        beside it (FILE.json), and a run with --only keeps the other sections from there
  --render FILE         write the report again from the results a run saved (FILE is printed at its end)
  --smoke               every scenario at tiny sizes, about 100 s (CI); asserts no timing`;

/** The full report, beside this package's README (its results beside it: BENCHMARKS.json). */
const REPORT = fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url));

/**
 * A path given on the command line, from where npm was run (INIT_CWD): `npm run bench` runs this
 * package's script in bench/, yet `--out my.md` from the repository's root means the root's my.md.
 */
const given = (path: string): string => resolve(process.env.INIT_CWD ?? process.cwd(), path);

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      'quiet-wait': { type: 'string' },
      retries: { type: 'string' },
      only: { type: 'string' },
      servers: { type: 'string' },
      subscribers: { type: 'string' },
      'sdk-subscribers': { type: 'string' },
      'fanout-tasks': { type: 'string' },
      'retained-sizes': { type: 'string' },
      'push-tasks': { type: 'string' },
      'push-concurrency': { type: 'string' },
      'push-timeout': { type: 'string' },
      'e2e-jobs': { type: 'string' },
      'e2e-kinds': { type: 'string' },
      'artifact-rows': { type: 'string' },
      'idle-claims': { type: 'string' },
      'idle-creates': { type: 'string' },
      'no-profile': { type: 'boolean', default: false },
      postgres: { type: 'string' },
      out: { type: 'string' },
      render: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const smoke = values.smoke ?? false;
  const num = (v: string | undefined, fallback: number, name: string): number => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} ${v}: expected a positive number`);
    return n;
  };
  const scenarios = new Set(
    (values.only ?? SCENARIOS.join(',')).split(',').map((s) => {
      if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`--only ${s}: not a scenario`);
      return s as Scenario;
    }),
  );
  const servers = new Set(
    (values.servers ?? SERVER_KINDS.join(',')).split(',').map((s) => {
      if (!(SERVER_KINDS as readonly string[]).includes(s))
        throw new Error(`--servers ${s}: not a server kind`);
      return s as ServerKind;
    }),
  );
  const subscribers = num(values.subscribers, smoke ? 200 : 10_000, 'subscribers');
  return {
    smoke,
    rounds: num(values.rounds, smoke ? 1 : 3, 'rounds'),
    durationS: num(values.duration, smoke ? 1 : 10, 'duration'),
    warmupS: values.warmup === '0' ? 0 : num(values.warmup, smoke ? 0.2 : 2, 'warmup'),
    quietWaitS: values['quiet-wait'] === '0' ? 0 : num(values['quiet-wait'], smoke ? 0 : 20, 'quiet-wait'),
    retries: values.retries === '0' ? 0 : num(values.retries, smoke ? 0 : 2, 'retries'),
    connections: 32,
    scenarios,
    servers,
    pollTasks: smoke ? 50 : 1000,
    subscribers,
    sdkSubscribers: num(values['sdk-subscribers'], subscribers, 'sdk-subscribers'),
    fanoutTasks: num(values['fanout-tasks'], smoke ? 10 : 100, 'fanout-tasks'),
    retainedSizes: (values['retained-sizes'] ?? (smoke ? '100,2000' : '1000,1000000'))
      .split(',')
      .map((s) => num(s, 0, 'retained-sizes')),
    templateTasks: 10,
    pushTasks: num(values['push-tasks'], smoke ? 50 : 5000, 'push-tasks'),
    pushConcurrency: 32,
    serverPushConcurrency: num(values['push-concurrency'], 32, 'push-concurrency'),
    pushTimeoutS: num(values['push-timeout'], smoke ? 30 : 120, 'push-timeout'),
    e2eJobs: num(values['e2e-jobs'], smoke ? 100 : 5000, 'e2e-jobs'),
    e2eInFlight: 32,
    e2eKinds: new Set(
      (values['e2e-kinds'] ?? E2E_KINDS.join(',')).split(',').map((s) => {
        if (!(E2E_KINDS as readonly string[]).includes(s))
          throw new Error(`--e2e-kinds ${s}: not an e2e kind`);
        return s as E2eKind;
      }),
    ),
    // 12,500,000 generated rows are 1,076,291,724 bytes: just over 1 GiB
    artifactRows: num(values['artifact-rows'], smoke ? 20_000 : 12_500_000, 'artifact-rows'),
    artifactChunkRows: smoke ? 5000 : 100_000,
    idleClaims: num(values['idle-claims'], 200, 'idle-claims'),
    idleWaitMs: 30_000,
    idleCreates: num(values['idle-creates'], smoke ? 5 : 20, 'idle-creates'),
    profile: !values['no-profile'],
    ...(values.postgres === 'off' ? {} : { postgresUrl: values.postgres ?? DEFAULT_POSTGRES_URL }),
    out: values.out ? given(values.out) : smoke ? join(tmpdir(), 'taskhandle-bench-smoke.md') : REPORT,
    ...(values.render ? { render: given(values.render) } : {}),
    // shown in the report: a password in a --postgres URL is masked
    argv: argv.map(shownUrl),
  };
}
