import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
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
  /** The API key of each principal of `apiKeys` (empty when the agent was launched without). */
  keys: Record<string, string>;
  /** The API keys file the server reads (when launched with `apiKeys`). */
  keysFile?: string;
  /**
   * The headers that carry this handle's credentials: sent by `rpc`, `waitForState` and the helpers
   * of a2a.ts (`rpcStream`...), and meant to be spread into hand-made requests. `{}`: anonymous.
   */
  credentials: Record<string, string>;
  /**
   * The same server, called as someone else: a principal of `apiKeys` (its `X-API-Key`), or exactly
   * the given headers (`{ Authorization: 'Bearer ...' }`; `{}` for no credentials at all).
   */
  as(who: string | Record<string, string>): Agent;
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
  /**
   * Principals to make API keys for, name -> tenant (`{ alice: 'acme' }`): their hashes go to a
   * temporary API_KEYS_FILE, so the server requires credentials. The keys are in `agent.keys`.
   * Owners are (tenant, principal): a restart with the same names sees the same tasks.
   */
  apiKeys?: Record<string, string>;
  /**
   * An API keys file written by `writeApiKeys`, used instead of a new one from `apiKeys`: instances
   * of one cluster must all accept the same keys.
   */
  apiKeysFile?: { file: string; keys: Record<string, string> };
  /**
   * Whom `agent` calls as: a principal of `apiKeys` (default: the first), or null for nobody
   * (no credentials; `agent.as(...)` picks one per call).
   */
  as?: string | null;
}

const tempDirs: string[] = [];
process.on('exit', () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** A TCP port free right now on 127.0.0.1 (for a server that must come back on the same one, or be asked before it says where it listens). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export function tempDbPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'taskhandle-test-'));
  tempDirs.push(dir);
  return join(dir, 'tasks.db');
}

/** A fresh API key, as `taskhandle api-keys add` makes them. */
export const newApiKey = (): string => `th_${randomBytes(32).toString('base64url')}`;

/** How the server stores a key: `sha256:<hex>`. */
export const hashApiKey = (key: string): string => `sha256:${createHash('sha256').update(key).digest('hex')}`;

/** The header that carries an API key. */
export const apiKeyHeader = (key: string): Record<string, string> => ({ 'X-API-Key': key });

/** Writes an API keys file for `principals` (name -> tenant) in a temporary folder; returns it and the keys. */
export function writeApiKeys(principals: Record<string, string>): {
  file: string;
  keys: Record<string, string>;
} {
  const dir = mkdtempSync(join(tmpdir(), 'taskhandle-keys-'));
  tempDirs.push(dir);
  const file = join(dir, 'api-keys.json');
  const keys: Record<string, string> = {};
  const entries = Object.entries(principals).map(([principal, tenant]) => {
    const key = newApiKey();
    keys[principal] = key;
    return { principal, tenant, keyHash: hashApiKey(key), label: 'spec-tests' };
  });
  writeFileSync(file, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
  return { file, keys };
}

/**
 * Runs the CLI (`taskhandle <args>`) with `env` and waits for it to exit: a command, or a `serve`
 * that a bad setting must stop before it listens (still running after 10 s fails).
 */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [MAIN, ...args], {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${tempDbPath()}`,
        LOG_LEVEL: 'silent',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    proc.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const guard = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`taskhandle ${args.join(' ')} still runs with ${JSON.stringify(env)}`));
    }, 10_000);
    proc.once('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `taskhandle serve` with `env`, expected to exit (a bad setting must stop the start). */
export const serveExpectingExit = (env: Record<string, string>) => runCli(['serve'], env);

/** Starts the real server (the built CLI) on a free port with its own database. */
export async function launch(o: LaunchOptions = {}): Promise<Agent> {
  const dbPath = o.dbPath ?? tempDbPath();
  const apiKeys = o.apiKeysFile ?? (o.apiKeys && writeApiKeys(o.apiKeys));
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
      ...(apiKeys ? { API_KEYS_FILE: apiKeys.file } : {}),
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

  const keys = apiKeys?.keys ?? {};
  const credentialsOf = (who: string | Record<string, string>): Record<string, string> => {
    if (typeof who !== 'string') return who;
    const key = keys[who];
    if (!key) throw new Error(`no API key for ${who}: launch with apiKeys: { ${who}: 'tenant' }`);
    return apiKeyHeader(key);
  };
  const calling = (credentials: Record<string, string>): Agent => {
    const handle: Agent = {
      url,
      dbPath,
      proc,
      logs,
      keys,
      keysFile: apiKeys?.file,
      credentials,
      as: (who) => calling(credentialsOf(who)),
      async rpc(method, params, ro = {}) {
        const res = await fetch(`${url}/`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            ...(ro.version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
            ...credentials,
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
          const { body } = await handle.rpc('GetTask', { id }, { version: '1.0' });
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
    return handle;
  };
  const first = Object.keys(keys)[0];
  const as = o.as === undefined ? first : o.as;
  return calling(as ? credentialsOf(as) : {});
}

/** A v1.0 user message with one text part (and optionally a data part). */
export function userMessage(text: string, extra: Record<string, unknown> = {}) {
  return { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra };
}
