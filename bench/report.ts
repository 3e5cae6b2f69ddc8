import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { jobTargets } from './job-targets.js';
import type { ProfileSummary } from './profile.js';
import {
  type LoadSummary,
  type Results,
  runOf,
  summarise,
  summariseFanout,
  summarisePush,
  summariseWorkers,
} from './results.js';
import {
  E2E_DURABILITY,
  E2E_KINDS,
  E2E_LABELS,
  E2E_REMOTE,
  type E2eResult,
  isRemoteE2e,
} from './scenarios/e2e.js';
import {
  CPU_STEPS,
  type CpuStep,
  STEP_LABELS,
  STEPS,
  type Step,
  TIMELINE_KINDS,
  type TimelineKind,
  type TimelineResult,
} from './scenarios/timeline.js';
import { WORKERS_KINDS } from './scenarios/workers.js';
import { POSTGRES_KINDS, SERVER_KINDS, SERVER_LABELS, type ServerKind } from './servers/kinds.js';
import { median } from './stats.js';
import { evaluateTargets, type TargetRow } from './targets.js';

/** Markdown tables for the terminal and bench/BENCHMARKS.md. */

export function table(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '-');
export const ms = (n: number) =>
  !Number.isFinite(n) ? '-' : n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en');
const x = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || !(b > 0) ? '-' : `${(a / b).toFixed(2)}×`;
const cpu = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

/** create and poll: medians, and ratios to both floors, to both SDK stores and to this server on SQLite. */
export function loadTable(r: Results): string {
  const rows: string[][] = [];
  for (const scenario of ['create', 'poll'] as const) {
    const s = Object.fromEntries(SERVER_KINDS.map((k) => [k, summarise(r[scenario][k])])) as Record<
      ServerKind,
      LoadSummary | undefined
    >;
    for (const k of SERVER_KINDS) {
      const m = s[k];
      if (!m) continue;
      rows.push([
        scenario,
        SERVER_LABELS[k],
        int(m.rps),
        ms(m.p50Ms),
        ms(m.p99Ms),
        x(m.rps, s.floor?.rps),
        x(m.rps, s['sqlite-floor']?.rps),
        x(m.rps, s['sdk-memory']?.rps),
        x(m.rps, s['sdk-sqlite']?.rps),
        x(m.rps, s.taskhandle?.rps),
        cpu(m.serverCpu),
        cpu(m.databaseCpu),
        int(m.serverRssMbMax),
        String(m.failures),
      ]);
    }
  }
  return table(
    [
      'scenario',
      'server',
      'req/s',
      'p50 ms',
      'p99 ms',
      '× (a) floor',
      '× (a) + SQLite',
      '× (b) in-memory',
      '× (b) SQLite',
      '× (c) SQLite',
      'server CPU',
      'PostgreSQL CPU',
      'server RSS MB',
      'failed',
    ],
    rows,
  );
}

/**
 * The MCP face beside A2A on taskhandle over SQLite: SEP-2663 tools/call beside SendMessage (create),
 * tasks/get beside GetTask (poll). Each pair is of one run when both scenarios ran in it.
 */
export function mcpTable(r: Results): string {
  // A2A's figures stand beside MCP's only from the same run: a ratio across runs (machines) says nothing.
  const sameRun = (scenario: 'create' | 'poll') => runOf(r, 'mcp') === runOf(r, scenario);
  const a2a = (scenario: 'create' | 'poll') =>
    sameRun(scenario) ? summarise(r[scenario].taskhandle) : undefined;
  const pairs = [
    ['create', 'tools/call', summarise(r.mcp.create), 'SendMessage', a2a('create')],
    ['poll', 'tasks/get', summarise(r.mcp.get), 'GetTask', a2a('poll')],
  ] as const;
  const rows: string[][] = [];
  for (const [scenario, mcpMethod, m, a2aMethod, a] of pairs) {
    if (m)
      rows.push([
        scenario,
        `MCP ${mcpMethod}`,
        int(m.rps),
        ms(m.p50Ms),
        ms(m.p99Ms),
        x(m.rps, a?.rps),
        cpu(m.serverCpu),
        String(m.failures),
      ]);
    if (a)
      rows.push([
        scenario,
        `A2A ${a2aMethod}`,
        int(a.rps),
        ms(a.p50Ms),
        ms(a.p99Ms),
        '1.00×',
        cpu(a.serverCpu),
        String(a.failures),
      ]);
  }
  if (rows.length === 0) return 'Not measured in this run.';
  const apart =
    (r.mcp.create?.length || r.mcp.get?.length) && !(sameRun('create') && sameRun('poll'))
      ? "\n\nA2A's create and poll were measured again in a later run; its figures of the MCP run were not kept, so no A2A row or ratio stands here (that run's report, with both, is in git history: the commit that last measured MCP)."
      : '';
  return (
    table(['scenario', 'request', 'req/s', 'p50 ms', 'p99 ms', '× A2A', 'server CPU', 'failed'], rows) + apart
  );
}

/** Where the cores went during create and poll on this server: itself, PostgreSQL, the load generator. */
export function coresTable(r: Results): string {
  const rows: string[][] = [];
  for (const scenario of ['create', 'poll'] as const)
    for (const k of ['taskhandle', ...POSTGRES_KINDS] as const) {
      const m = summarise(r[scenario][k]);
      if (!m) continue;
      const db = Number.isFinite(m.databaseCpu) ? m.databaseCpu : 0;
      rows.push([
        scenario,
        SERVER_LABELS[k],
        int(m.rps),
        cpu(m.serverCpu),
        cpu(m.databaseCpu),
        cpu(m.clientCpu),
        cpu(m.serverCpu + db + m.clientCpu),
        cpu(m.otherCpuMax),
      ]);
    }
  return table(
    [
      'scenario',
      'server',
      'req/s',
      'taskhandle CPU',
      'PostgreSQL CPU',
      'load generator CPU',
      'sum (cores)',
      'others, at most',
    ],
    rows,
  );
}

export function fanoutTable(r: Results): string {
  const rows: string[][] = [];
  for (const k of SERVER_KINDS) {
    const f = summariseFanout(r.fanout[k]);
    if (!f) continue;
    rows.push([
      SERVER_LABELS[k],
      `${int(f.opened)} of ${int(f.subscribers)}`,
      int(f.received),
      ms(f.allReceivedMs),
      ms(f.p50Ms),
      ms(f.p99Ms),
      f.rssGrowthMb.toFixed(1),
      (f.bytesPerSubscriber / 1024).toFixed(1),
      f.subscribeS.toFixed(1),
      f.clientEluMax.toFixed(2),
    ]);
  }
  return table(
    [
      'server',
      'streams open',
      'got the transition',
      'all received after ms',
      'p50 ms',
      'p99 ms',
      'RSS growth MB',
      'KB per subscriber',
      'open all s',
      'client ELU',
    ],
    rows,
  );
}

/** push delivery: medians over rounds; delivered is the worst round, duplicates the sum. */
export function pushTable(r: Results): string {
  const rows: string[][] = [];
  for (const k of SERVER_KINDS) {
    const p = summarisePush(r.push?.[k]);
    if (!p) continue;
    rows.push([
      SERVER_LABELS[k],
      int(p.expected),
      int(p.delivered),
      int(p.duplicates),
      int(p.posts),
      int(p.deliveriesPerS),
      int(p.endToEndPerS),
      ms(p.p50DelayMs),
      ms(p.p99DelayMs),
      ms(p.completedP50Ms),
      Number.isFinite(p.allDeliveredS) ? p.allDeliveredS.toFixed(1) : 'never',
      p.createS.toFixed(1),
      cpu(p.serverCpu),
    ]);
  }
  return table(
    [
      'server',
      'notifications expected',
      'delivered',
      'duplicates',
      'POSTs received',
      'deliveries/s (first → last)',
      'deliveries/s (first create → last)',
      'p50 delay ms',
      'p99 delay ms',
      'send → completed p50 ms',
      'all delivered after s',
      'create all s',
      'server CPU',
    ],
    rows,
  );
}

/**
 * Jobs created, run and collected: medians over rounds; the ratios are to pg-boss's and
 * graphile-worker's rates in the same run (issue 30's targets: taskhandle on PostgreSQL at 3x and 1.5x), and, for the remote-worker rows, to
 * the same store running the same no-op job in process (the target: within 1.5x).
 */
export function e2eTable(r: Results): string {
  const perS = (list: readonly E2eResult[] | undefined) =>
    list?.length ? median(list.map((e) => e.perS)) : Number.NaN;
  const boss = perS(r.e2e['pg-boss']);
  const graphile = perS(r.e2e['graphile-worker']);
  const rows: string[][] = [];
  for (const k of E2E_KINDS) {
    const list = r.e2e[k];
    if (!list?.length) continue;
    const m = (f: (e: E2eResult) => number) => median(list.map(f));
    const rate = m((e) => e.perS);
    const inProcess = isRemoteE2e(k) ? perS(r.e2e[E2E_REMOTE[k]]) : Number.NaN;
    rows.push([
      E2E_LABELS[k],
      int(Math.min(...list.map((e) => e.completed))),
      int(rate),
      isRemoteE2e(k) ? x(rate, inProcess) : '-',
      x(rate, boss),
      x(rate, graphile),
      ms(m((e) => e.p50Ms)),
      ms(m((e) => e.p99Ms)),
      cpu(m((e) => e.serverCpu)),
      isRemoteE2e(k) ? cpu(m((e) => e.workerCpu ?? Number.NaN)) : '-',
      ms(m((e) => (e.serverCpu / e.perS) * 1000)),
      E2E_DURABILITY[k],
    ]);
  }
  return table(
    [
      'server',
      'jobs completed',
      'completed/s',
      'x same job in process',
      'x pg-boss',
      'x graphile-worker',
      'create → completed p50 ms',
      'p99 ms',
      'server CPU',
      'of it, the worker',
      'CPU ms per job',
      'what an acknowledged job survives',
    ],
    rows,
  );
}

/**
 * One job's life, one job at a time: when each step's event reached the caller (medians over rounds
 * of each round's median), what the step itself took, and the server CPU a job.
 */
export function timelineTable(r: Results): string {
  const kinds = TIMELINE_KINDS.filter((k) => r.timeline?.[k]?.length);
  if (!kinds.length) return '';
  const m = (k: TimelineKind, f: (t: TimelineResult) => number) => median((r.timeline[k] ?? []).map(f));
  const cpu = (k: TimelineKind, step: CpuStep) => {
    const us = m(k, (t) => t.stepCpuUs?.[step] ?? Number.NaN);
    return Number.isNaN(us) ? '-' : int(us);
  };
  const rows = STEPS.map((step, i) => [
    STEP_LABELS[step],
    ...kinds.flatMap((k) => {
      const at = m(k, (t) => t.atMs[step]);
      const before = i === 0 ? 0 : m(k, (t) => t.atMs[STEPS[i - 1] as Step]);
      return [ms(at), ms(at - before), cpu(k, step)];
    }),
  ]);
  rows.push([STEP_LABELS.between, ...kinds.flatMap((k) => ['', '', cpu(k, 'between')])]);
  rows.push([
    'main thread, the whole job (the sum of the steps)',
    ...kinds.flatMap((k) => {
      const sum = m(k, (t) =>
        t.stepCpuUs ? CPU_STEPS.reduce((n, s) => n + (t.stepCpuUs?.[s] ?? 0), 0) : Number.NaN,
      );
      return ['', '', Number.isNaN(sum) ? '-' : int(sum)];
    }),
  ]);
  rows.push([
    'p99 of the whole life (to completed)',
    ...kinds.flatMap((k) => [ms(m(k, (t) => t.p99Ms)), '', '']),
  ]);
  rows.push([
    'server CPU a job, core-ms (of it in the kernel): every thread, from /proc',
    ...kinds.flatMap((k) => [
      `${ms(m(k, (t) => t.cpuMsPerJob))} (${ms(m(k, (t) => t.systemMsPerJob))})`,
      '',
      '',
    ]),
  ]);
  return table(
    ['step', ...kinds.flatMap((k) => [`${SERVER_LABELS[k]}: at ms`, 'step ms', 'main-thread CPU µs'])],
    rows,
  );
}

/** A profile's function label (`name file:line`) as a report shows it: the name as code, the file after. */
const functionName = (label: string): string => {
  const m = /^(.*) (\S+:\d+)$/.exec(label);
  return m ? `\`${m[1]}\` ${(m[2] as string).replace(/^dist\/src\//, '')}` : label;
};

/** Where each step's main-thread CPU went: the functions with the most self time (last round's profile). */
export function timelineCpuTable(r: Results): string {
  const kinds = TIMELINE_KINDS.filter((k) => r.timeline?.[k]?.some((t) => t.stepTop));
  if (!kinds.length) return '';
  const last = (k: TimelineKind) => (r.timeline[k] ?? []).findLast((t) => t.stepTop);
  const rows = CPU_STEPS.map((step) => [
    STEP_LABELS[step],
    ...kinds.map((k) =>
      (last(k)?.stepTop?.[step] ?? []).map((f) => `${functionName(f.name)} ${int(f.us)}`).join('; '),
    ),
  ]);
  return table(['step', ...kinds.map((k) => `${SERVER_LABELS[k]}: functions, self µs a job`)], rows);
}

/** The remote end-to-end rows as their worker process timed them: medians over rounds. */
export function remoteWorkerTable(r: Results): string {
  const rows: string[][] = [];
  for (const k of E2E_KINDS) {
    const list = (r.e2e[k] ?? []).flatMap((e) => (e.worker ? [e.worker] : []));
    if (!isRemoteE2e(k) || !list.length) continue;
    const m = (f: (w: (typeof list)[number]) => number) => median(list.map(f));
    rows.push([
      E2E_LABELS[k],
      int(m((w) => w.claims)),
      m((w) => w.jobsPerClaim).toFixed(1),
      `${ms(m((w) => w.claimP50Ms))} / ${ms(m((w) => w.claimP99Ms))}`,
      `${ms(m((w) => w.completeP50Ms))} / ${ms(m((w) => w.completeP99Ms))}`,
    ]);
  }
  if (!rows.length) return '';
  return table(
    ['worker of', 'claims answered', 'jobs a claim', 'claim p50 / p99 ms', 'complete p50 / p99 ms'],
    rows,
  );
}

/** Idle workers: medians over rounds; create → claim over every round's creates. */
export function workersTable(r: Results): string {
  const rows: string[][] = [];
  const floor = summariseWorkers(r.workers.floor);
  for (const k of WORKERS_KINDS) {
    const w = summariseWorkers(r.workers[k]);
    if (!w) continue;
    rows.push([
      SERVER_LABELS[k],
      `${int(w.waiting)} of ${int(w.claims)}`,
      int(w.answeredEarly),
      `${w.quietRssMb.toFixed(1)} → ${w.waitingRssMb.toFixed(1)}`,
      (w.bytesPerClaim / 1024).toFixed(1),
      (r.workers[k] ?? []).map((x) => (x.bytesPerClaim / 1024).toFixed(1)).join(' / '),
      Number.isFinite(w.heapMb) ? w.heapMb.toFixed(1) : '-',
      Number.isFinite(w.heapBytesPerClaim) ? (w.heapBytesPerClaim / 1024).toFixed(1) : '-',
      k === 'floor'
        ? Number.isFinite(w.heapBytesPerClaim)
          ? '1.00×'
          : '-'
        : x(w.heapBytesPerClaim, floor?.heapBytesPerClaim),
      cpu3(w.quietCpu),
      cpu3(w.waitingCpu),
      w.createToClaim.n
        ? `${ms(w.createToClaim.p50Ms)} / ${ms(w.createToClaim.p99Ms)} (n ${w.createToClaim.n})`
        : '-',
      w.createToClaim.n ? ms(w.createToClaim.createdP50Ms) : '-',
    ]);
  }
  if (rows.length === 0) return 'Not measured in this run.';
  return table(
    [
      'server',
      'claims waiting at the end',
      'answered early',
      'RSS MB, quiet → claims waiting',
      'RSS KB per claim',
      'per round',
      'live heap MB',
      'live heap KB per claim',
      'heap × (a) floor',
      'CPU quiet (cores)',
      'CPU while they wait (cores)',
      'create → claimed p50 / p99 ms',
      'create answered p50 ms',
    ],
    rows,
  );
}

const cpu3 = (n: number) => (Number.isFinite(n) ? n.toFixed(3) : '-');

export function retainedTable(r: Results): string {
  const rows = r.retained.map((row) => {
    const base = r.retained.filter((o) => o.kind === row.kind).sort((a, b) => a.size - b.size)[0];
    const store = r.stores.find((s) => s.kind === row.kind && s.size === row.size);
    const poll = summarise(row.poll);
    const create = summarise(row.create);
    return [
      SERVER_LABELS[row.kind],
      int(row.size),
      int(poll?.rps ?? Number.NaN),
      ms(poll?.p99Ms ?? Number.NaN),
      x(poll?.rps, summarise(base?.poll)?.rps),
      int(create?.rps ?? Number.NaN),
      ms(create?.p99Ms ?? Number.NaN),
      x(create?.rps, summarise(base?.create)?.rps),
      int(store?.bytesPerTask ?? Number.NaN),
      String((poll?.failures ?? 0) + (create?.failures ?? 0)),
    ];
  });
  return table(
    [
      'server',
      'stored tasks',
      'poll req/s',
      'poll p99 ms',
      'poll × smallest',
      'create req/s',
      'create p99 ms',
      'create × smallest',
      'bytes/task on disk',
      'failed',
    ],
    rows,
  );
}

/** One profile; `from` names its run when the report mixes runs. */
export function profileSection(p: ProfileSummary, from = ''): string {
  const rows = (list: ProfileSummary['functions']) =>
    list.map((f) => [`\`${f.name}\``, int(f.selfMs), `${(f.share * 100).toFixed(1)}%`]);
  const callers = p.functions
    .filter((f) => f.calledFrom)
    .map(
      (f) =>
        `- \`${f.name}\` ← ${f.calledFrom
          ?.split(' ← ')
          .map((c) => `\`${c}\``)
          .join(' ← ')}`,
    );
  return [
    `### ${p.label}`,
    '',
    `${from}${int(p.load.rps)} req/s, p99 ${ms(p.load.p99Ms)} ms, server CPU ${cpu(p.load.serverCpu)}; ${int(p.totalMs)} ms of samples in the load window.`,
    '',
    table(['function (self time)', 'ms', 'share'], rows(p.functions.slice(0, 10))),
    '',
    'Heaviest callers of the top functions:',
    '',
    ...callers,
    '',
    table(['where (self time)', 'ms', 'share'], rows(p.packages)),
  ].join('\n');
}

export const targetsTable = (r: Results): string => targetRows(evaluateTargets(r));
/** The targets of issue 30: a job's whole life, each beside its floor or anchor. */
export const jobTargetsTable = (r: Results): string => targetRows(jobTargets(r));

function targetRows(rows: TargetRow[]): string {
  return table(
    ['target', 'measured (medians)', 'result'],
    rows.map((t) => [t.target, t.measured, t.verdict === 'NOT MET' ? '**NOT MET**' : t.verdict]),
  );
}

const KEEP_START = '<!-- analysis:start -->';
const KEEP_END = '<!-- analysis:end -->';

/** Writes the report; the hand-written analysis between the markers of an existing file is kept. */
export function writeReport(path: string, generated: string): void {
  let kept = `${KEEP_START}\n## Analysis\n\n(Write what the profiles show here; this section survives regeneration.)\n${KEEP_END}`;
  if (existsSync(path)) {
    const old = readFileSync(path, 'utf8');
    const a = old.indexOf(KEEP_START);
    const b = old.indexOf(KEEP_END);
    if (a >= 0 && b > a) kept = old.slice(a, b + KEEP_END.length);
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${generated.trimEnd()}\n\n${kept}\n`);
}
