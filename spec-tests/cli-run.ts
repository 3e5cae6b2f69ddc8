import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Agent } from './harness.js';

/** The built command line, as `taskhandle` runs it. */
export const MAIN = fileURLToPath(new URL('../dist/src/main.js', import.meta.url));

export interface Run {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** The exit code, once the command has ended. */
  exited: Promise<number | null>;
}

/** Starts `taskhandle <args>` as a client of `url` (piped, so not a terminal), in `cwd` if given. */
export function start(args: string[], url: string, token?: string, cwd?: string): Run {
  const proc = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, TASKHANDLE_URL: url, TASKHANDLE_TOKEN: token ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  let stdout = '';
  let stderr = '';
  proc.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  proc.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs `taskhandle <args>` against `agent` (with its API key, if it has one) to its end. */
export async function cli(agent: Agent | string, args: string[], token?: string, cwd?: string) {
  const url = typeof agent === 'string' ? agent : agent.url;
  const key = token ?? (typeof agent === 'string' ? undefined : Object.values(agent.keys)[0]);
  const run = start(args, url, key, cwd);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

export const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
