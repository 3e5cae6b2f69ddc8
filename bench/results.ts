import { readFileSync, writeFileSync } from 'node:fs';
import type { LoadResult } from './load.js';
import type { Machine } from './machine.js';
import type { Options } from './options.js';
import type { ProfileSummary } from './profile.js';
import type { FanoutResult } from './scenarios/fanout.js';
import type { PushResult } from './scenarios/push.js';
import type { SeededStore } from './scenarios/retained.js';
import type { StoreKind } from './seed/templates.js';
import type { ServerKind } from './servers/launch.js';
import { median } from './stats.js';

/** Everything one run measured, round by round. */
export interface Results {
  options: Options;
  machine: Machine;
  elapsedS: number;
  create: Partial<Record<ServerKind, LoadResult[]>>;
  poll: Partial<Record<ServerKind, LoadResult[]>>;
  fanout: Partial<Record<ServerKind, FanoutResult[]>>;
  stores: Omit<SeededStore, 'pollIds' | 'path'>[];
  retained: { kind: StoreKind; size: number; poll: LoadResult[]; create: LoadResult[] }[];
  push: Partial<Record<ServerKind, PushResult[]>>;
  profiles: ProfileSummary[];
  /** Measurements that could not run at all (the server did not start, a profile was not written). */
  errors: string[];
}

export const emptyResults = (options: Options, machine: Machine): Results => ({
  options,
  machine,
  elapsedS: 0,
  create: {},
  poll: {},
  fanout: {},
  stores: [],
  retained: [],
  push: {},
  profiles: [],
  errors: [],
});

/** Results as JSON (NaN, which JSON lacks, kept as a string), so a report can be rendered again. */
export const saveResults = (path: string, r: Results): void =>
  writeFileSync(
    path,
    JSON.stringify(r, (_k, v) => (Number.isNaN(v) ? 'NaN' : v)),
  );

export function loadResults(path: string): Results {
  const r = JSON.parse(readFileSync(path, 'utf8'), (_k, v) => (v === 'NaN' ? Number.NaN : v)) as Results;
  // results saved before the push scenario existed
  r.push ??= {};
  return r;
}

/** The medians over rounds of one scenario on one server. */
export interface LoadSummary {
  rounds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serverCpu: number;
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
