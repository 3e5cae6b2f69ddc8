import { rmSync } from 'node:fs';
import { DatabaseMeter, dropSchema, freshSchema, instanceUrl } from '../postgres.js';
import { tempPath } from '../temp.js';
import type { PostgresKind } from './kinds.js';
import { type RunningServer, type ServerEnv, spawnServer } from './process.js';

let postgresUrl: string | undefined;

/** The database every PostgreSQL launch of this run uses (run.ts sets it once it answered). */
export function usePostgres(url: string): void {
  postgresUrl = url;
}

/** The database set by {@link usePostgres}, if any (pg-boss's end-to-end run uses it too). */
export const configuredPostgres = (): string | undefined => postgresUrl;

/**
 * `instances` taskhandle processes on one fresh schema, started at once (the first start creates the
 * schema; the others wait on its migration lock), sharing one KEYS_DIR like a deployed cluster. They
 * are one server to the scenarios: the load is spread over their URLs, CPU and memory are summed.
 * Stopping stops every instance, then drops the schema.
 */
export async function launchCluster(
  kind: PostgresKind,
  instances: number,
  argv: string[],
  env: ServerEnv,
): Promise<RunningServer> {
  const url = postgresUrl;
  if (!url) throw new Error(`${kind}: no PostgreSQL configured for this run`);
  const schema = freshSchema();
  const keysDir = tempPath(`keys-${schema}`);
  const settings = {
    ...env,
    DATABASE_URL: instanceUrl(url, schema),
    DATABASE_SCHEMA: schema,
    KEYS_DIR: keysDir,
  };
  let meter: DatabaseMeter | undefined;
  const started = await Promise.allSettled(
    Array.from({ length: instances }, () => spawnServer(kind, argv, settings)),
  );
  const procs = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const cleanUp = async (graceMs?: number) => {
    await Promise.all(procs.map((p) => p.stop(graceMs)));
    await meter?.close();
    await dropSchema(url, schema);
    rmSync(keysDir, { recursive: true, force: true });
  };
  const failed = started.find((s) => s.status === 'rejected');
  try {
    if (failed) throw failed.reason;
    meter = await DatabaseMeter.open(url, schema);
  } catch (err) {
    await cleanUp().catch(() => {});
    throw err;
  }
  const sum = (f: (p: RunningServer) => number) => procs.reduce((n, p) => n + f(p), 0);
  const first = procs[0] as RunningServer;
  const db = meter;
  let stopped: Promise<void> | undefined;
  return {
    kind,
    urls: procs.map((p) => p.url),
    url: first.url,
    pids: procs.flatMap((p) => p.pids),
    rssBytes: () => sum((p) => p.rssBytes()),
    cpuSeconds: () => sum((p) => p.cpuSeconds()),
    databaseCpu: () => db.snapshot(),
    crashed: () => procs.map((p) => p.crashed()).find((c) => c !== undefined),
    stop: (graceMs) => {
      stopped ??= cleanUp(graceMs);
      return stopped;
    },
  };
}
