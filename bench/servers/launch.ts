import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, rssBytes } from '../proc-stats.js';
import { freshDbPath } from '../temp.js';

/** The servers under test: (a) the floor, (b) the SDK reference on two stores, (c) this server. */
export const SERVER_KINDS = ['floor', 'sdk-memory', 'sdk-sqlite', 'taskhandle'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

export const SERVER_LABELS: Record<ServerKind, string> = {
  floor: '(a) node:http floor',
  'sdk-memory': '(b) SDK 1.3, InMemoryTaskStore',
  'sdk-sqlite': '(b) SDK 1.3, DatabaseTaskStore (SQLite)',
  taskhandle: '(c) taskhandle, SQLite',
};

export interface RunningServer {
  kind: ServerKind;
  url: string;
  pid: number;
  /** The SQLite file, for the kinds that have one. */
  dbPath?: string;
  rssBytes(): number;
  cpuSeconds(): number;
  /** Why the process ended, if it ended without being stopped (exit code and the end of its stderr). */
  crashed(): string | undefined;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface LaunchOptions {
  /** Reuse this database file (a seeded copy, a restart); default: a fresh temporary one. */
  dbPath?: string;
  /** Extra `node` flags for the server process (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Extra arguments for the server script (the SDK reference's `--push`). */
  args?: string[];
  env?: Record<string, string>;
}

const DIST = fileURLToPath(new URL('../../', import.meta.url)); // dist/
const TASKHANDLE_MAIN = join(DIST, 'src/main.js');
const FLOOR = join(DIST, 'bench/servers/floor.js');
const SDK_REFERENCE = join(DIST, 'bench/servers/sdk-reference.js');
const require = createRequire(import.meta.url);
const A2A_DB_CLI = join(dirname(require.resolve('@a2a-js/sdk')), 'cli/a2a_db.js');

/** Starts one server in its own process and resolves once it has printed the URL it listens on. */
export async function launch(kind: ServerKind, o: LaunchOptions = {}): Promise<RunningServer> {
  const dbPath = kind === 'sdk-sqlite' || kind === 'taskhandle' ? (o.dbPath ?? freshDbPath(kind)) : undefined;
  const nodeArgs = o.nodeArgs ?? [];
  let args: string[];
  let env: Record<string, string> = { PORT: '0' };
  switch (kind) {
    case 'floor':
      args = [FLOOR];
      break;
    case 'sdk-memory':
      args = [SDK_REFERENCE, '--store', 'memory'];
      break;
    case 'sdk-sqlite':
      if (dbPath && !existsSync(dbPath)) createSdkSchema(dbPath);
      args = [SDK_REFERENCE, '--store', 'sqlite', '--db', String(dbPath)];
      break;
    case 'taskhandle':
      if (!existsSync(TASKHANDLE_MAIN)) throw new Error(`${TASKHANDLE_MAIN} is missing: npm run build`);
      args = [TASKHANDLE_MAIN, 'serve'];
      env = {
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${dbPath}`,
        // info prints the URL line and nothing per request
        LOG_LEVEL: 'info',
        // jobs of an hour would hold every stop for the default 10 s
        SHUTDOWN_TIMEOUT_MS: '500',
        // the create scenario leaves tens of thousands of unfinished tasks to one (anonymous)
        // caller, as the reference servers allow: no per-principal cap in the comparison
        MAX_ACTIVE_TASKS: '0',
      };
      break;
  }
  const proc = spawn(process.execPath, [...nodeArgs, ...args, ...(o.args ?? [])], {
    env: { ...process.env, ...env, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stderr: '', stdout: [] as string[] };
  const url = await listeningUrl(proc, kind, output);
  const pid = proc.pid ?? -1;
  let stopping = false;
  let crash: string | undefined;
  proc.once('exit', (code, signal) => {
    if (stopping) return;
    const tail = `${output.stdout.slice(-5).join('\n')}\n${output.stderr.slice(-2000)}`.trim();
    crash = `${kind} exited unexpectedly (${signal ?? `code ${code}`}): ${tail}`;
  });
  return {
    kind,
    url,
    pid,
    dbPath,
    rssBytes: () => rssBytes(pid),
    cpuSeconds: () => cpuSeconds(pid),
    crashed: () => crash,
    stop: (graceMs = 15_000) => {
      stopping = true;
      return stopProcess(proc, graceMs);
    },
  };
}

/** Creates the SDK's task table the way the SDK documents: its `a2a-db` CLI. */
export function createSdkSchema(dbPath: string): void {
  execFileSync(process.execPath, [A2A_DB_CLI, 'upgrade', '--url', `sqlite:${dbPath}`, '--store', 'tasks'], {
    stdio: 'pipe',
  });
}

function listeningUrl(
  proc: ChildProcess,
  kind: ServerKind,
  output: { stderr: string; stdout: string[] },
): Promise<string> {
  proc.stderr?.on('data', (d: Buffer) => {
    output.stderr = (output.stderr + d.toString()).slice(-20_000);
  });
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${kind} did not start within 60 s`)), 60_000);
    const fail = (err: Error) => {
      clearTimeout(timer);
      proc.kill('SIGKILL');
      reject(new Error(`${err.message}\n${output.stderr}`));
    };
    proc.once('exit', (code) => fail(new Error(`${kind} exited with ${code} before listening`)));
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      output.stdout.push(line);
      if (output.stdout.length > 50) output.stdout.shift();
      const url = /"url":"(http:\/\/[^"]+)"/.exec(line)?.[1];
      if (!url) return;
      clearTimeout(timer);
      proc.removeAllListeners('exit');
      resolve(url);
    });
  });
}

function stopProcess(proc: ChildProcess, graceMs: number): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}
