import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { CpuSnapshot } from '../postgres.js';
import { cpuSeconds, rssBytes } from '../proc-stats.js';
import type { ServerKind } from './kinds.js';

/** A server under test: one process, or (the two-instance PostgreSQL kind) several serving as one. */
export interface RunningServer {
  kind: ServerKind;
  /** Where the load goes: one URL per instance; the load is spread over them connection by connection. */
  urls: string[];
  /** The first instance's URL: setup calls (creating the tasks to poll) go there. */
  url: string;
  /** The gRPC kind: where the load goes instead (`host:port`, from the listening line). */
  grpcTarget?: string;
  /** Every server process. */
  pids: number[];
  /** The SQLite file, for the kinds that have one. */
  dbPath?: string;
  /** Summed over the instances. */
  rssBytes(): number;
  /** Summed over the instances. */
  cpuSeconds(): number;
  /** PostgreSQL kinds: CPU so far of the database processes that serve this server (see DatabaseMeter). */
  databaseCpu?(): Promise<CpuSnapshot>;
  /** Why a process ended, if one ended without being stopped (exit code and the end of its stderr). */
  crashed(): string | undefined;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; then whatever the launch made is removed. */
  stop(graceMs?: number): Promise<void>;
}

/** A server's environment on top of this process's; a variable set to undefined is not passed on. */
export type ServerEnv = Record<string, string | undefined>;

/** Starts `node argv…` and resolves once it has printed the URL it listens on. */
export async function spawnServer(
  kind: ServerKind,
  argv: string[],
  env: ServerEnv,
  dbPath?: string,
): Promise<RunningServer> {
  const proc = spawn(process.execPath, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stderr: '', stdout: [] as string[] };
  const url = await listeningUrl(proc, kind, output);
  const grpcTarget = output.stdout.map((l) => /"grpc":\{"address":"([^"]+)"/.exec(l)?.[1]).find(Boolean);
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
    urls: [url],
    url,
    ...(grpcTarget ? { grpcTarget } : {}),
    pids: [pid],
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
      const tail = `${output.stdout.slice(-5).join('\n')}\n${output.stderr}`.trim();
      reject(new Error(`${err.message}\n${tail}`));
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
