/** Reading a V8 .cpuprofile: self time per function and per package, and who called the hottest. */

export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** One row of a profile summary. */
export interface ProfileRow {
  name: string;
  selfMs: number;
  share: number;
  /** For the hottest functions: their heaviest chain of callers, innermost first. */
  calledFrom?: string;
}

export interface Summary {
  /** Profiled time inside the window. */
  totalMs: number;
  /** Functions by self time (where the CPU actually was). */
  functions: ProfileRow[];
  /** Self time grouped by package (node_modules), node internals, taskhandle's own code, GC. */
  packages: ProfileRow[];
}

const CALLER_DEPTH = 4;
const WITH_CALLERS = 3;

/** Summarises the samples taken between `from` and `to` (CLOCK_MONOTONIC microseconds). */
export function summariseProfile(p: CpuProfile, [from, to]: [number, number]): Summary {
  const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  const chains = new Map<string, Map<string, number>>();
  let t = p.startTime;
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    const frame = frames.get(id);
    if (t < from || t > to || !frame) return;
    total += dt;
    const key = label(frame);
    fn.set(key, (fn.get(key) ?? 0) + dt);
    const group = packageOf(frame);
    pkg.set(group, (pkg.get(group) ?? 0) + dt);
    const callers: string[] = [];
    for (let up = parent.get(id); up !== undefined && callers.length < CALLER_DEPTH; up = parent.get(up)) {
      const f = frames.get(up);
      if (f && f.functionName !== '(root)') callers.push(label(f));
    }
    const byChain = chains.get(key) ?? new Map<string, number>();
    const chain = callers.join(' ← ');
    byChain.set(chain, (byChain.get(chain) ?? 0) + dt);
    chains.set(key, byChain);
  });
  const rows = (m: Map<string, number>, n: number): ProfileRow[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: total ? us / total : 0 }));
  const functions = rows(fn, 15);
  for (const row of functions.slice(0, WITH_CALLERS)) {
    const heaviest = [...(chains.get(row.name) ?? [])].sort((a, b) => b[1] - a[1])[0];
    if (heaviest?.[0]) row.calledFrom = heaviest[0];
  }
  return { totalMs: total / 1000, functions, packages: rows(pkg, 12) };
}

/** A span of CLOCK_MONOTONIC microseconds whose samples count toward `key`. */
export interface Window<K> {
  key: K;
  from: number;
  to: number;
}

/** What the sampled thread did inside windows of one key: busy time (not idle) and by function. */
export interface Attributed {
  busyUs: number;
  byFunction: Map<string, number>;
}

/**
 * The samples that fall in each window (sorted by `from`, not overlapping), summed by window key:
 * each sample counts for the time since the one before it (as DevTools counts it), idle ones not.
 */
export function attribute<K>(p: CpuProfile, windows: readonly Window<K>[]): Map<K, Attributed> {
  const frames = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const out = new Map<K, Attributed>();
  let w = 0;
  let t = p.startTime;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    while (w < windows.length && (windows[w] as Window<K>).to <= t) w++;
    const window = windows[w];
    const frame = frames.get(id);
    if (!window || t < window.from || !frame || frame.functionName === '(idle)') return;
    let sum = out.get(window.key);
    if (!sum) {
      sum = { busyUs: 0, byFunction: new Map() };
      out.set(window.key, sum);
    }
    sum.busyUs += dt;
    const key = label(frame);
    sum.byFunction.set(key, (sum.byFunction.get(key) ?? 0) + dt);
  });
  return out;
}

function label(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  const short = frame.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/dist\//, 'dist/');
  return `${name} ${short}:${frame.lineNumber + 1}`;
}

function packageOf({ functionName, url }: CallFrame): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native: V8 builtins, better-sqlite3 C++)';
  if (url.startsWith('node:')) return 'node: internals';
  const nm = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm?.[1]) return nm[1];
  // taskhandle's own code, by folder: src/store/sqlite/, src/faces/a2a/, src/engine/ ...
  const own = /\/dist\/src\/(.*\/)?[^/]+$/.exec(url);
  if (own) return `taskhandle src/${own[1] ?? ''}`;
  return url;
}
