import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LoadResult, measure } from './load.js';
import { type CpuProfile, type Summary, summariseProfile } from './profile-summary.js';
import type { Load } from './scenarios/create.js';
import { launch } from './servers/launch.js';
import { tempPath } from './temp.js';

export type { ProfileRow } from './profile-summary.js';

export interface ProfileSummary extends Summary {
  label: string;
  load: LoadResult;
}

export interface ProfileTarget {
  /** One taskhandle process, on SQLite (`dbPath`: a seeded copy, else a fresh file) or PostgreSQL. */
  kind: 'taskhandle' | 'taskhandle-pg';
  dbPath?: string;
}

/**
 * Runs taskhandle under `node --cpu-prof` with one load and summarises the samples taken while the
 * measured load ran, warm-up excluded (V8's profile clock and process.hrtime are both CLOCK_MONOTONIC).
 */
export async function profileLoad(
  label: string,
  load: Load,
  setup: (url: string) => Promise<() => string>,
  target: ProfileTarget = { kind: 'taskhandle' },
): Promise<ProfileSummary> {
  const dir = tempPath(`profile-${label.replace(/\W+/g, '-')}`);
  const server = await launch(target.kind, {
    ...(target.dbPath ? { dbPath: target.dbPath } : {}),
    nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  });
  let result: LoadResult;
  try {
    result = await measure(server, { ...load, body: await setup(server.url) });
  } finally {
    await server.stop(60_000);
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no CPU profile written in ${dir}`);
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as CpuProfile;
  return { label, load: result, ...summariseProfile(profile, result.windowUs) };
}
