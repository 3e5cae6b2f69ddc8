import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as wait } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from '../proc-stats.js';

/**
 * The remote skill of the benchmarks (docs/workers.md): declared by remote-skills.ts, which a
 * server loads with SKILLS, and worked by remote-worker.ts, a process of its own running runWorker;
 * and its in-process twin, declared in the same module. This module holds only the names and paths,
 * so that the bench process loads nothing of the server.
 */

/** The remote skill's id: its tasks complete at once (the worker returns `{ message: 'done' }`). */
export const REMOTE_SKILL = 'bench.remote';
/** Its in-process twin: the same skill run by the server's runner (it returns `{ message: 'done' }`). */
export const LOCAL_SKILL = 'bench.local';

/** An A2A data part creating a job of the remote skill, and one of its twin. */
export const REMOTE_JOB = { data: { skill: REMOTE_SKILL, input: {} } };
export const LOCAL_JOB = { data: { skill: LOCAL_SKILL, input: {} } };

/** The compiled skills module, for SKILLS. */
export const BENCH_SKILLS_MODULE = fileURLToPath(new URL('./remote-skills.js', import.meta.url));
const REMOTE_WORKER = fileURLToPath(new URL('./remote-worker.js', import.meta.url));

/** One worker process (remote-worker.ts) working the remote skill of the server at a URL. */
export interface WorkerProcess {
  pid: number;
  cpuSeconds(): number;
  /** Why it ended, if it ended without being stopped. */
  crashed(): string | undefined;
  /**
   * SIGTERM (the worker stops claiming and exits), then SIGKILL after `graceMs`; answers how long its
   * claims and completes took (ms each, from the call to the answer), when it said so before exiting.
   */
  stop(graceMs?: number): Promise<WorkerStats | undefined>;
}

/** What the worker process timed: each answered claim and each complete, in ms. */
export interface WorkerStats {
  claims: number[];
  completes: number[];
}

/** Starts a worker process and resolves once its first claim is in flight (it prints `ready`). */
export async function startWorker(
  url: string,
  concurrency: number,
  nodeArgs: string[] = [],
): Promise<WorkerProcess> {
  const argv = [...nodeArgs, REMOTE_WORKER, '--url', url, '--concurrency', String(concurrency)];
  const proc = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  let stopping = false;
  let stats: WorkerStats | undefined;
  let crash: string | undefined;
  const exited = new Promise<void>((resolve) =>
    // 'close': once its output is read too (the stats line comes just before it exits)
    proc.once('close', (code, signal) => {
      if (!stopping) crash = `the worker exited unexpectedly (${signal ?? `code ${code}`}): ${stderr.trim()}`;
      resolve();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the worker did not claim within 30 s: ${stderr.trim()}`));
    }, 30_000);
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (line.startsWith('stats ')) stats = JSON.parse(line.slice('stats '.length)) as WorkerStats;
      if (line !== 'ready') return;
      clearTimeout(timer);
      resolve();
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the worker exited before its first claim: ${stderr.trim()}`));
    });
  });
  const pid = proc.pid as number;
  return {
    pid,
    cpuSeconds: () => cpuSeconds(pid),
    crashed: () => crash,
    async stop(graceMs = 5000) {
      stopping = true;
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        await Promise.race([exited, wait(graceMs).then(() => proc.kill('SIGKILL'))]);
        await exited;
      }
      return stats;
    },
  };
}
