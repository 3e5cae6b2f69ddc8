import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../dist/src/main.js', import.meta.url));

export interface Agent {
  url: string;
  /** The SQLite file this agent (and any restart of it) uses. */
  dbPath: string;
  proc: ChildProcess;
  /** Parsed pino log lines so far. */
  logs: Record<string, unknown>[];
  /** JSON-RPC call; `version` picks the A2A-Version header (none for 0.3, as old peers send). */
  rpc(
    method: string,
    params: unknown,
    o?: { version?: '1.0' | '0.3'; headers?: Record<string, string> },
  ): Promise<RpcReply>;
  /** Polls GetTask until the task is in one of `states` (v1.0 names, e.g. TASK_STATE_COMPLETED). */
  waitForState(id: string, states: string | string[], timeoutMs?: number): Promise<Json>;
  /** SIGTERM and wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL: no shutdown at all. */
  kill9(): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

export interface RpcReply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
  body: any;
}

export interface LaunchOptions {
  env?: Record<string, string>;
  conformance?: boolean;
  /** Reuse a database (restart); default: a fresh temporary one. */
  dbPath?: string;
}

const tempDirs: string[] = [];
process.on('exit', () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

export function tempDbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'taskhandle-test-'));
  tempDirs.push(dir);
  return join(dir, 'tasks.db');
}

/** Starts the real server (the built CLI) on a free port with its own database. */
export async function launch(o: LaunchOptions = {}): Promise<Agent> {
  const dbPath = o.dbPath ?? tempDbPath();
  const proc = spawn(process.execPath, [MAIN, 'serve', ...(o.conformance ? ['--conformance'] : [])], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${dbPath}`,
      LOG_LEVEL: 'info',
      SQLITE_SYNCHRONOUS: 'normal',
      // Tests register webhooks on example.com too: a test machine must never call out.
      PUSH_ALLOW_PUBLIC: 'false',
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    if (!proc.stdout) throw new Error('the server has no stdout pipe');
    const lines = createInterface({ input: proc.stdout });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === 'taskhandle listening') resolve(String(entry.url));
      } catch {
        logs.push({ raw: line });
      }
    });
    proc.once('exit', (code) => reject(new Error(`server exited with ${code} before listening: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  let stopping = false;
  proc.once('exit', (code, signal) => {
    // A crash is what a test most needs to explain: show what the server said last.
    if (!stopping) {
      const tail = logs.slice(-20).map((l) => JSON.stringify(l));
      console.error(`server ${url} died (code ${code}, signal ${signal})\n${stderr}\n${tail.join('\n')}`);
    }
  });

  const agent: Agent = {
    url,
    dbPath,
    proc,
    logs,
    async rpc(method, params, ro = {}) {
      const res = await fetch(`${url}/`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(ro.version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
          ...ro.headers,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return { status: res.status, body: await res.json() };
    },
    async waitForState(id, states, timeoutMs = 15_000) {
      const wanted = Array.isArray(states) ? states : [states];
      const deadline = Date.now() + timeoutMs;
      let last: Json | undefined;
      while (Date.now() < deadline) {
        const { body } = await agent.rpc('GetTask', { id }, { version: '1.0' });
        last = body.result;
        if (last && wanted.includes(last.status.state)) return last;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(
        `task ${id} not in ${wanted.join('|')} after ${timeoutMs} ms; last: ${JSON.stringify(last?.status)}`,
      );
    },
    async stop() {
      stopping = true;
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      return exited;
    },
    async kill9() {
      stopping = true;
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGKILL');
      await exited;
    },
  };
  return agent;
}

/** A v1.0 user message with one text part (and optionally a data part). */
export function userMessage(text: string, extra: Record<string, unknown> = {}) {
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra };
}
