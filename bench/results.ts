import { readFileSync, writeFileSync } from 'node:fs';
import type { LoadResult } from './load.js';
import type { Machine } from './machine.js';
import { type Options, SCENARIOS, type Scenario } from './options.js';
import { shownUrl } from './postgres.js';
import type { ProfileSummary } from './profile.js';
import type { ArtifactKind, ArtifactResult } from './scenarios/artifact.js';
import type { E2eKind, E2eResult } from './scenarios/e2e.js';
import type { FairnessResult } from './scenarios/fairness.js';
import type { FanoutResult } from './scenarios/fanout.js';
import type { FloodResult } from './scenarios/flood.js';
import type { PushResult } from './scenarios/push.js';
import type { SeededStore } from './scenarios/retained.js';
import type { TimelineKind, TimelineResult } from './scenarios/timeline.js';
import type { WorkersKind, WorkersResult } from './scenarios/workers.js';
import type { StoreKind } from './seed/templates.js';
import type { ServerKind } from './servers/kinds.js';
import { median, percentile } from './stats.js';

/** One run of the bench: where, when, how. */
export interface RunInfo {
  machine: Machine;
  options: Options;
  elapsedS: number;
}

/**
 * Everything one run measured, round by round, and (after a run with --only) the sections of
 * earlier runs that it did not measure again, kept from their saved results.
 */
export interface Results {
  /** This run. */
  options: Options;
  machine: Machine;
  elapsedS: number;
  /** Every run with a section here: this one first (once stamped), then the earlier ones kept. */
  runs: RunInfo[];
  /** The run (index in `runs`) of each section; keys: the scenarios, and `profile <label>` per profile. */
  sections: Record<string, number>;
  create: Partial<Record<ServerKind, LoadResult[]>>;
  poll: Partial<Record<ServerKind, LoadResult[]>>;
  /** The MCP face on taskhandle (SQLite), round by round: SEP-2663 tools/call and tasks/get. */
  mcp: { create: LoadResult[]; get: LoadResult[] };
  fanout: Partial<Record<ServerKind, FanoutResult[]>>;
  stores: Omit<SeededStore, 'pollIds' | 'path'>[];
  retained: { kind: StoreKind; size: number; poll: LoadResult[]; create: LoadResult[] }[];
  push: Partial<Record<ServerKind, PushResult[]>>;
  /**
   * Jobs created, run and collected, round by round, on the A2A servers (taskhandle's job run in
   * process, or by a remote worker) and on pg-boss.
   */
  e2e: Partial<Record<E2eKind, E2eResult[]>>;
  /** One job at a time, each step timed (issue 30), round by round. */
  timeline: Partial<Record<TimelineKind, TimelineResult[]>>;
  /** Idle workers long-polling (docs/workers.md), round by round, on taskhandle and on the floor. */
  workers: Partial<Record<WorkersKind, WorkersResult[]>>;
  /** The large-artifact scenario, once per store (its rounds are inside). */
  artifact: Partial<Record<ArtifactKind, ArtifactResult>>;
  profiles: ProfileSummary[];
  /** Fair claims under a flood, and the claim rate beside a large queue (docs/scheduling.md). */
  fairness?: FairnessResult[];
  /** Another tenant's create and poll, alone and beside a flood by one key at every bound (issue 29). */
  flood?: FloodResult;
  /** Measurements that could not run at all (the server did not start, a profile was not written). */
  errors: { section: string; message: string }[];
}

export const profileKey = (label: string): string => `profile ${label}`;

/** The run a section's numbers come from. */
export const runOf = (r: Results, section: string): RunInfo | undefined => {
  const i = r.sections[section];
  return i === undefined ? undefined : r.runs[i];
};

export const emptyResults = (options: Options, machine: Machine): Results => ({
  options,
  machine,
  elapsedS: 0,
  runs: [],
  sections: {},
  create: {},
  poll: {},
  mcp: { create: [], get: [] },
  fanout: {},
  stores: [],
  retained: [],
  push: {},
  e2e: {},
  timeline: {},
  workers: {},
  artifact: {},
  profiles: [],
  errors: [],
});

/** The results file beside a report: BENCHMARKS.md → BENCHMARKS.json. */
export const resultsPath = (report: string): string => `${report.replace(/\.md$/, '')}.json`;

/**
 * Results as JSON (NaN, which JSON lacks, kept as a string; the scenario set as a list; no password of
 * a database URL), so that a report can be rendered again and a later run with --only can keep the
 * sections it does not measure.
 */
export const saveResults = (path: string, r: Results): void =>
  writeFileSync(path, `${JSON.stringify(r, toJson, 2)}\n`);

function toJson(key: string, value: unknown): unknown {
  if (Number.isNaN(value)) return 'NaN';
  if (value instanceof Set) return [...value];
  if (key === 'postgresUrl' && typeof value === 'string') return shownUrl(value);
  return value;
}

export function loadResults(path: string): Results {
  const r = JSON.parse(readFileSync(path, 'utf8'), (_k, v) => (v === 'NaN' ? Number.NaN : v)) as Results;
  // results saved before the push scenario existed
  r.push ??= {};
  r.e2e ??= {}; // results saved before the e2e scenario existed
  r.timeline ??= {};
  r.workers ??= {}; // results saved before the workers scenario existed
  r.artifact ??= {};
  // results saved before runs and structured errors: one run made every section
  const revive = (o: Options): Options => ({
    ...o,
    scenarios: new Set(Array.isArray(o.scenarios) ? o.scenarios : measuredScenarios(r)),
  });
  r.options = revive(r.options);
  r.mcp ??= { create: [], get: [] }; // results saved before the mcp scenario existed
  if (!Array.isArray(r.runs)) stampSections(r);
  for (const run of r.runs) run.options = revive(run.options);
  r.errors = r.errors.map((e) => (typeof e === 'string' ? { section: '', message: e } : e));
  return r;
}

/** The scenarios that have numbers in `r`. */
export function measuredScenarios(r: Results): Scenario[] {
  return SCENARIOS.filter((s) =>
    s === 'retained'
      ? r.retained.length > 0
      : s === 'mcp'
        ? (r.mcp?.create.length ?? 0) > 0
        : Object.keys(r[s] ?? {}).length > 0,
  );
}

/** Marks every section of `r` as measured by its own run (at its end, when its length is known). */
export function stampSections(r: Results): void {
  r.runs = [{ machine: r.machine, options: r.options, elapsedS: r.elapsedS }];
  r.sections = {};
  for (const s of measuredScenarios(r)) r.sections[s] = 0;
  for (const p of r.profiles) r.sections[profileKey(p.label)] = 0;
}

/**
 * Adds to `fresh` the sections of `saved` it did not measure: whole scenarios this run left out
 * (--only), and profiles it did not take again, each with the run it came from. Returns what was kept.
 */
export function keepUnmeasured(fresh: Results, saved: Results): string[] {
  const kept: string[] = [];
  const keep = (key: string): boolean => {
    const run = runOf(saved, key);
    if (!run) return false;
    let i = fresh.runs.findIndex((x) => x.machine.date === run.machine.date);
    if (i < 0) i = fresh.runs.push(run) - 1;
    fresh.sections[key] = i;
    kept.push(key);
    return true;
  };
  for (const s of SCENARIOS) {
    if (fresh.options.scenarios.has(s) || !keep(s)) continue;
    if (s === 'create' || s === 'poll') fresh[s] = saved[s];
    else if (s === 'mcp') fresh.mcp = saved.mcp;
    else if (s === 'fanout') fresh.fanout = saved.fanout;
    else if (s === 'push') fresh.push = saved.push;
    else if (s === 'e2e') fresh.e2e = saved.e2e;
    else if (s === 'timeline') fresh.timeline = saved.timeline;
    else if (s === 'workers') fresh.workers = saved.workers;
    else if (s === 'artifact') fresh.artifact = saved.artifact;
    else if (s === 'fairness') fresh.fairness = saved.fairness;
    else if (s === 'flood') fresh.flood = saved.flood;
    else {
      fresh.retained = saved.retained;
      fresh.stores = saved.stores;
    }
  }
  for (const p of saved.profiles)
    if (!fresh.profiles.some((q) => q.label === p.label) && keep(profileKey(p.label))) fresh.profiles.push(p);
  fresh.errors.push(...saved.errors.filter((e) => kept.includes(e.section)));
  return kept;
}

/** The medians over rounds of one scenario on one server. */
export interface LoadSummary {
  rounds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serverCpu: number;
  /** NaN for the servers without PostgreSQL. */
  databaseCpu: number;
  clientCpu: number;
  otherCpuMax: number;
  serverRssMbMax: number;
  failures: number;
}

export function summarise(rounds: readonly LoadResult[] | undefined): LoadSummary | undefined {
  if (!rounds?.length) return undefined;
  const m = (f: (r: LoadResult) => number) => median(rounds.map(f));
  return {
    rounds: rounds.length,
    rps: m((r) => r.rps),
    p50Ms: m((r) => r.p50Ms),
    p99Ms: m((r) => r.p99Ms),
    serverCpu: m((r) => r.serverCpu),
    databaseCpu: m((r) => r.databaseCpu ?? Number.NaN),
    clientCpu: m((r) => r.clientCpu),
    otherCpuMax: Math.max(...rounds.map((r) => r.otherCpu)),
    serverRssMbMax: Math.max(...rounds.map((r) => r.serverRssMb)),
    failures: rounds.reduce((n, r) => n + r.failures, 0),
  };
}

export interface FanoutSummary {
  subscribers: number;
  opened: number;
  received: number;
  allReceivedMs: number;
  p50Ms: number;
  p99Ms: number;
  rssGrowthMb: number;
  bytesPerSubscriber: number;
  subscribeS: number;
  clientEluMax: number;
  errors: string[];
}

export function summariseFanout(rounds: readonly FanoutResult[] | undefined): FanoutSummary | undefined {
  if (!rounds?.length) return undefined;
  const m = (f: (r: FanoutResult) => number) => median(rounds.map(f));
  return {
    subscribers: Math.max(...rounds.map((r) => r.subscribers)),
    opened: Math.min(...rounds.map((r) => r.opened)),
    received: Math.min(...rounds.map((r) => r.received)),
    // a round where not every stream got the transition counts as never (NaN, dropped by median)
    allReceivedMs: rounds.some((r) => Number.isNaN(r.allReceivedMs)) ? Number.NaN : m((r) => r.allReceivedMs),
    p50Ms: m((r) => r.p50Ms),
    p99Ms: m((r) => r.p99Ms),
    rssGrowthMb: m((r) => r.rssGrowthMb),
    bytesPerSubscriber: m((r) => r.bytesPerSubscriber),
    subscribeS: m((r) => r.subscribeS),
    clientEluMax: Math.max(...rounds.map((r) => r.clientElu)),
    errors: rounds.flatMap((r) => (r.error ? [r.error] : [])),
  };
}

export interface PushSummary {
  rounds: number;
  expected: number;
  /** The fewest delivered in a round. */
  delivered: number;
  /** Summed over rounds. */
  duplicates: number;
  posts: number;
  deliveriesPerS: number;
  endToEndPerS: number;
  p50DelayMs: number;
  p99DelayMs: number;
  completedP50Ms: number;
  /** NaN when some round did not get every notification. */
  allDeliveredS: number;
  createS: number;
  serverCpu: number;
  clientEluMax: number;
  otherCpuMax: number;
  errors: string[];
}

export function summarisePush(rounds: readonly PushResult[] | undefined): PushSummary | undefined {
  if (!rounds?.length) return undefined;
  const m = (f: (r: PushResult) => number) => median(rounds.map(f));
  return {
    rounds: rounds.length,
    expected: Math.max(...rounds.map((r) => r.expected)),
    delivered: Math.min(...rounds.map((r) => r.delivered)),
    duplicates: rounds.reduce((n, r) => n + r.duplicates, 0),
    posts: m((r) => r.posts),
    deliveriesPerS: m((r) => r.deliveriesPerS),
    endToEndPerS: m((r) => r.endToEndPerS),
    p50DelayMs: m((r) => r.p50DelayMs),
    p99DelayMs: m((r) => r.p99DelayMs),
    completedP50Ms: m((r) => r.completedP50Ms),
    allDeliveredS: rounds.some((r) => Number.isNaN(r.allDeliveredS)) ? Number.NaN : m((r) => r.allDeliveredS),
    createS: m((r) => r.createS),
    serverCpu: m((r) => r.serverCpu),
    clientEluMax: Math.max(...rounds.map((r) => r.clientElu)),
    // results saved before otherCpu was measured have none
    otherCpuMax: Math.max(...rounds.map((r) => r.otherCpu ?? 0)),
    errors: rounds.flatMap((r) => (r.error ? [r.error] : [])),
  };
}

export interface WorkersSummary {
  rounds: number;
  claims: number;
  /** The fewest still waiting at the end of a round's wait, and the most answered early in one. */
  waiting: number;
  answeredEarly: number;
  quietRssMb: number;
  waitingRssMb: number;
  bytesPerClaim: number;
  heapMb: number;
  heapBytesPerClaim: number;
  quietCpu: number;
  waitingCpu: number;
  clientCpuMax: number;
  /** Over every round's creates pooled (NaN where none was timed: the floor). */
  createToClaim: { n: number; p50Ms: number; p99Ms: number; maxMs: number; createdP50Ms: number };
  errors: string[];
}

/** Idle workers: medians over rounds; create → claim over the rounds' creates pooled. */
export function summariseWorkers(rounds: readonly WorkersResult[] | undefined): WorkersSummary | undefined {
  if (!rounds?.length) return undefined;
  const m = (f: (r: WorkersResult) => number) => median(rounds.map(f));
  const samples = rounds.flatMap((r) => r.createToClaim?.samplesMs ?? []);
  const created = rounds.flatMap((r) => r.createToClaim?.createdSamplesMs ?? []);
  return {
    rounds: rounds.length,
    claims: Math.max(...rounds.map((r) => r.claims)),
    waiting: Math.min(...rounds.map((r) => r.waiting)),
    answeredEarly: Math.max(...rounds.map((r) => r.answeredEarly)),
    quietRssMb: m((r) => r.quietRssMb),
    waitingRssMb: m((r) => r.waitingRssMb),
    bytesPerClaim: m((r) => r.bytesPerClaim),
    // results saved before the live heap was measured have none
    heapMb: m((r) => r.heapMb ?? Number.NaN),
    heapBytesPerClaim: m((r) => r.heapBytesPerClaim ?? Number.NaN),
    quietCpu: m((r) => r.quietCpu),
    waitingCpu: m((r) => r.waitingCpu),
    clientCpuMax: Math.max(...rounds.map((r) => r.clientCpu)),
    createToClaim: {
      n: samples.length,
      p50Ms: percentile(samples, 50),
      p99Ms: percentile(samples, 99),
      maxMs: samples.length ? Math.max(...samples) : Number.NaN,
      createdP50Ms: percentile(created, 50),
    },
    errors: rounds.flatMap((r) => (r.error ? [r.error] : [])),
  };
}
