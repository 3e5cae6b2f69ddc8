import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LoadResult, measure } from './load.js';
import type { Load } from './scenarios/create.js';
import { launch } from './servers/launch.js';
import { tempPath } from './temp.js';

/** One row of a CPU profile summary. */
export interface ProfileRow {
  name: string;
  selfMs: number;
  share: number;
}

export interface ProfileSummary {
  label: string;
  load: LoadResult;
  /** Profiled time inside the measurement window. */
  totalMs: number;
  /** Functions by self time (where the CPU actually was). */
  functions: ProfileRow[];
  /** Self time grouped by package (node_modules), node internals, taskhandle's own code, GC. */
  packages: ProfileRow[];
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Runs taskhandle under `node --cpu-prof` with one load and summarises the samples taken while the
 * measured load ran, warm-up excluded (V8's profile clock and process.hrtime are both CLOCK_MONOTONIC).
 */
export async function profileLoad(
  label: string,
  load: Load,
  setup: (url: string) => Promise<() => string>,
  dbPath?: string,
): Promise<ProfileSummary> {
  const dir = tempPath(`profile-${label.replace(/\W+/g, '-')}`);
  const server = await launch('taskhandle', { dbPath, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  let result: LoadResult;
  try {
    result = await measure(server, { ...load, body: await setup(server.url) });
  } finally {
    await server.stop(60_000);
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no CPU profile written in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  return { label, load: result, ...summarise(profile, result.windowUs) };
}

function summarise(p: CpuProfile, [from, to]: [number, number]) {
  const byNode = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  const fn = new Map<string, number>();
  const pkg = new Map<string, number>();
  let t = p.startTime;
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (t < from || t > to) return;
    const frame = byNode.get(id);
    if (!frame) return;
    total += dt;
    const key = `${frame.functionName || '(anonymous)'} ${where(frame.url, frame.lineNumber)}`.trim();
    fn.set(key, (fn.get(key) ?? 0) + dt);
    const group = packageOf(frame.functionName, frame.url);
    pkg.set(group, (pkg.get(group) ?? 0) + dt);
  });
  const rows = (m: Map<string, number>, n: number): ProfileRow[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: total ? us / total : 0 }));
  return { totalMs: total / 1000, functions: rows(fn, 15), packages: rows(pkg, 12) };
}

const where = (url: string, line: number): string => {
  if (!url) return '';
  const short = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/dist\//, 'dist/');
  return `${short}:${line + 1}`;
};

function packageOf(name: string, url: string): string {
  if (!url) return name.startsWith('(') ? name : '(native: V8 builtins, better-sqlite3 C++)';
  if (url.startsWith('node:')) return 'node: internals';
  const nm = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm?.[1]) return nm[1];
  if (url.includes('/dist/src/'))
    return `taskhandle ${url.replace(/^.*\/dist\/src\/([^/]+\/)?.*$/, '$1') || 'src/'}`;
  return url;
}
