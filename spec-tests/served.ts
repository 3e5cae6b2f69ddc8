import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/**
 * A server started by a command of a user's (their script, an installed binary), not the harness's
 * built CLI: it must say where it listens in a JSON line on stdout.
 */
export interface Served {
  url: string;
  /** The JSON line that gave the URL. */
  line: Record<string, unknown>;
  proc: ChildProcess;
  /** What it wrote so far (stdout and stderr), for failure messages. */
  output(): string;
  /** SIGTERM and wait for the exit (SIGKILL after `timeoutMs`); the exit code, null when killed. */
  stop(timeoutMs?: number): Promise<number | null>;
}

export interface ServeOptions {
  cwd: string;
  env: Record<string, string>;
  /** The URL a stdout line announces, or undefined for any other line. */
  urlOf: (line: Record<string, unknown>) => string | undefined;
  timeoutMs?: number;
}

/** The URL of taskhandle's own "listening" line (the binary's, or a createServer script's logger). */
export const listeningUrl = (line: Record<string, unknown>): string | undefined =>
  line.msg === 'taskhandle listening' ? String(line.url) : undefined;

/**
 * A user's environment for a server of theirs on a fresh SQLite file `db` in `dir`, on a free port:
 * PATH and HOME only, nothing of the test runner's.
 */
export const userEnv = (dir: string, db: string): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? dir,
  PORT: '0',
  DATABASE_URL: `sqlite:${join(dir, db)}`,
});

/** Runs `command args` and resolves once a stdout line gives its URL (rejects on exit or timeout). */
export function serve(command: string, args: string[], o: ServeOptions): Promise<Served> {
  const proc = spawn(command, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const stop = async (timeoutMs = 15_000): Promise<number | null> => {
    if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
    proc.kill('SIGTERM');
    const guard = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    const code = await exited;
    clearTimeout(guard);
    return code;
  };
  const what = `${command} ${args.join(' ')}`;
  return new Promise<Served>((resolve, reject) => {
    const guard = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${what} gave no URL within ${o.timeoutMs ?? 30_000} ms:\n${output}`));
    }, o.timeoutMs ?? 30_000);
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', (text) => {
      output += `${text}\n`;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return;
      }
      const url = o.urlOf(line);
      if (url === undefined) return;
      clearTimeout(guard);
      resolve({ url, line, proc, output: () => output, stop });
    });
    proc.once('exit', (code, signal) => {
      clearTimeout(guard);
      reject(new Error(`${what} exited (${code ?? signal}) before giving its URL:\n${output}`));
    });
  });
}

/** The servers a test file started, by name: `keep(name)` files one as it starts, `stopAll()` ends them. */
export class ServedSet {
  readonly #servers = new Map<string, Served>();

  keep = (name: string) => (served: Served) => void this.#servers.set(name, served);

  /** The server started as `name`; a test that needs one that did not start fails saying so. */
  get(name: string): Served {
    const served = this.#servers.get(name);
    if (!served) throw new Error(`${name} did not start`);
    return served;
  }

  stopAll(): Promise<(number | null)[]> {
    return Promise.all([...this.#servers.values()].map((s) => s.stop()));
  }
}
