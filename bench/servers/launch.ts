import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshDbPath } from '../temp.js';
import { isPostgres, type PostgresKind, type ServerKind } from './kinds.js';
import { launchCluster } from './postgres-cluster.js';
import { type RunningServer, type ServerEnv, spawnServer } from './process.js';

export type { RunningServer, ServerEnv } from './process.js';

/** Instances of each PostgreSQL kind, all on one fresh schema. */
const INSTANCES: Record<PostgresKind, number> = { 'taskhandle-pg': 1, 'taskhandle-pg-2': 2 };

export interface LaunchOptions {
  /** Reuse this database file (a seeded copy, a restart); default: a fresh temporary one. */
  dbPath?: string;
  /** Extra `node` flags for the server process (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Extra arguments for the server script (the SDK reference's `--push`). */
  args?: string[];
  /** Settings on top of the kind's; one set to undefined is left unset: the server's own default. */
  env?: ServerEnv;
}

/** The metrics kind's token: the bench scrapes with it. */
export const BENCH_METRICS_TOKEN = 'bench-metrics-token-0123456789';

const require = createRequire(import.meta.url);
/** The `taskhandle` command of the package this one depends on, as `npx taskhandle` would run it. */
const TASKHANDLE_MAIN = taskhandleBin();
const FLOOR = fileURLToPath(new URL('./floor.js', import.meta.url));
const SQLITE_FLOOR = fileURLToPath(new URL('./sqlite-floor.js', import.meta.url));
const SDK_REFERENCE = fileURLToPath(new URL('./sdk-reference.js', import.meta.url));
const A2A_DB_CLI = join(dirname(require.resolve('@a2a-js/sdk')), 'cli/a2a_db.js');

/** taskhandle's settings in every kind; the store's come on top. */
const TASKHANDLE_ENV = {
  PORT: '0',
  HOST: '127.0.0.1',
  // its default: the URL line, and one audit line per create (src/server.ts), as deployed
  LOG_LEVEL: 'info',
  // jobs of an hour would hold every stop for the default 10 s
  SHUTDOWN_TIMEOUT_MS: '500',
  // the create scenario leaves tens of thousands of unfinished tasks to one (anonymous)
  // caller, as the reference servers allow: no per-principal cap in the comparison
  MAX_ACTIVE_TASKS: '0',
  // the fan-out holds thousands of streams of that one caller, as the reference servers allow
  MAX_STREAMS: '0',
};

/**
 * What sets each SQLite variant apart from `taskhandle`. The gRPC kind is the same server with its
 * gRPC port open (the load goes there, grpc-load.ts); the metrics kind counts every request, task and
 * store call for Prometheus (docs/metrics.md), scraped as the load runs (load.ts).
 */
const VARIANT_ENV: Record<'taskhandle' | 'taskhandle-grpc' | 'taskhandle-metrics', Record<string, string>> = {
  taskhandle: {},
  'taskhandle-grpc': { GRPC_PORT: '0' },
  'taskhandle-metrics': { METRICS_TOKEN: BENCH_METRICS_TOKEN },
};

/** Starts one server (its own process or processes) and resolves once every instance listens. */
export async function launch(kind: ServerKind, o: LaunchOptions = {}): Promise<RunningServer> {
  const nodeArgs = o.nodeArgs ?? [];
  const extra = o.args ?? [];
  if (
    kind === 'taskhandle' ||
    kind === 'taskhandle-grpc' ||
    kind === 'taskhandle-metrics' ||
    isPostgres(kind)
  ) {
    if (!existsSync(TASKHANDLE_MAIN))
      throw new Error(`${TASKHANDLE_MAIN} is missing: npm run build (in the repository's root)`);
  }
  switch (kind) {
    case 'floor':
      return spawnServer(kind, [...nodeArgs, FLOOR, ...extra], { PORT: '0', ...o.env });
    case 'sqlite-floor': {
      const dbPath = o.dbPath ?? freshDbPath(kind);
      return spawnServer(
        kind,
        [...nodeArgs, SQLITE_FLOOR, ...extra],
        { PORT: '0', DB_PATH: dbPath, ...o.env },
        dbPath,
      );
    }
    case 'sdk-memory':
      return spawnServer(kind, [...nodeArgs, SDK_REFERENCE, '--store', 'memory', ...extra], {
        PORT: '0',
        ...o.env,
      });
    case 'sdk-sqlite': {
      const dbPath = o.dbPath ?? freshDbPath(kind);
      if (!existsSync(dbPath)) createSdkSchema(dbPath);
      const argv = [...nodeArgs, SDK_REFERENCE, '--store', 'sqlite', '--db', dbPath, ...extra];
      return spawnServer(kind, argv, { PORT: '0', ...o.env }, dbPath);
    }
    case 'taskhandle':
    case 'taskhandle-grpc':
    case 'taskhandle-metrics': {
      const dbPath = o.dbPath ?? freshDbPath(kind);
      const env = { ...TASKHANDLE_ENV, ...VARIANT_ENV[kind], DATABASE_URL: `sqlite:${dbPath}`, ...o.env };
      return spawnServer(kind, [...nodeArgs, TASKHANDLE_MAIN, 'serve', ...extra], env, dbPath);
    }
    case 'taskhandle-pg':
    case 'taskhandle-pg-2':
      return launchCluster(kind, INSTANCES[kind], [...nodeArgs, TASKHANDLE_MAIN, 'serve', ...extra], {
        ...TASKHANDLE_ENV,
        ...o.env,
      });
  }
}

/** Creates the SDK's task table the way the SDK documents: its `a2a-db` CLI. */
export function createSdkSchema(dbPath: string): void {
  execFileSync(process.execPath, [A2A_DB_CLI, 'upgrade', '--url', `sqlite:${dbPath}`, '--store', 'tasks'], {
    stdio: 'pipe',
  });
}

function taskhandleBin(): string {
  const manifest = require.resolve('taskhandle/package.json');
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { taskhandle: string } };
  return join(dirname(manifest), bin.taskhandle);
}
