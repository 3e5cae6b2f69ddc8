import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ROOT } from './package-project.js';
import { codeBlocks, commands } from './readme-blocks.js';

/** SIGINT, as Ctrl-C sends (the examples stop on it), and the exit code. */
export function interrupt(proc: ChildProcess): Promise<number | null> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve(proc.exitCode);
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  proc.kill('SIGINT');
  const guard = setTimeout(() => proc.kill('SIGKILL'), 15_000);
  return exited.finally(() => clearTimeout(guard));
}

/** What a page's shell blocks show printed (their whole-line `# ` comments), one line each. */
export function shownOn(page: string): string[] {
  return codeBlocks(readFileSync(join(ROOT, page), 'utf8'))
    .filter((b) => b.lang === 'sh' || b.lang === 'bash')
    .flatMap((b) => commands(b.text).flatMap((c) => c.output));
}

export interface Sample {
  proc: ChildProcess;
  /** What it wrote so far, stdout and stderr, for failure messages. */
  output(): string;
  /** The first stdout line (so far or to come) matching `pattern`; rejects if it exits first. */
  line(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Its exit code, once it exits by itself. */
  exited: Promise<number | null>;
}

/**
 * Runs a sample of examples/ with node as printed, but for the addresses it names: each
 * `[printed, actual]` pair is replaced (as a whole word; each must occur, so a sample that changes its
 * address fails here instead of reaching the printed one). The changed copy is written beside the
 * file, so that its imports resolve as the original's do, and removed once it exits.
 */
export function runSample(
  path: string,
  addresses: [printed: string, actual: string][],
  o: { cwd: string; env: Record<string, string> },
): Sample {
  const file = join(ROOT, path);
  let text = readFileSync(file, 'utf8');
  for (const [printed, actual] of addresses) {
    const word = new RegExp(`\\b${printed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'g');
    if (!word.test(text))
      throw new Error(`${path} no longer names ${printed}: teach its test the new address`);
    text = text.replace(word, actual);
  }
  const copy = join(dirname(file), `.${basename(file, '.mjs')}.run-${process.pid}.mjs`);
  if (addresses.length > 0) writeFileSync(copy, text);
  const proc = spawn(process.execPath, [addresses.length > 0 ? copy : file], {
    cwd: o.cwd,
    env: o.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => {
      if (addresses.length > 0) rmSync(copy, { force: true });
      resolve(code);
    }),
  );
  let output = '';
  let stdout = '';
  const waiting = new Set<() => void>();
  proc.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
    stdout += d.toString();
    for (const check of waiting) check();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const line = (pattern: RegExp, timeoutMs = 20_000): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const done = () => {
        waiting.delete(check);
        clearTimeout(guard);
        proc.off('exit', exited);
      };
      const check = () => {
        for (const l of stdout.split('\n')) {
          const m = pattern.exec(l);
          if (m) {
            done();
            resolve(m);
            return;
          }
        }
      };
      const exited = () => {
        done();
        reject(new Error(`${path} exited before printing ${pattern}:\n${output}`));
      };
      const guard = setTimeout(() => {
        done();
        reject(new Error(`${path} printed no ${pattern} within ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      waiting.add(check);
      proc.once('exit', exited);
      check();
    });
  return { proc, output: () => output, line, exited };
}

// biome-ignore lint/suspicious/noExplicitAny: job documents are inspected freely in tests
export type Job = Record<string, any>;

/** POST /v1/jobs: the status and the job document (or problem) answered. */
export async function createJob(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; job: Job }> {
  const res = await fetch(`${url}/v1/jobs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, job: (await res.json()) as Job };
}

/** Polls GET /v1/jobs/{id} until `done` holds of it (15 s at most); the job document then. */
export async function jobUntil(
  url: string,
  id: string,
  done: (job: Job) => boolean,
  headers: Record<string, string> = {},
): Promise<Job> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const job = (await (await fetch(`${url}/v1/jobs/${id}`, { headers })).json()) as Job;
    if (done(job)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} never got there: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The fields of `value` named, in that order: what `jq -c '{a, b}'` prints, as JSON.stringify gives it. */
export const pick = (value: Job, ...keys: string[]): string =>
  JSON.stringify(Object.fromEntries(keys.map((k) => [k, value[k]])));

/** GET `url` as JSON. */
export const getJson = async (url: string, headers: Record<string, string> = {}): Promise<Job> =>
  (await (await fetch(url, { headers })).json()) as Job;
