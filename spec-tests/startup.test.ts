import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { getTask, skillMessage, startTask } from './a2a.js';
import { freePort, launch, serveExpectingExit } from './harness.js';

const MAIN = fileURLToPath(new URL('../dist/src/main.js', import.meta.url));

describe('one server per SQLite file', () => {
  it('a second server on the same file stops (exit 78), naming the file, the holder and PostgreSQL', async () => {
    const first = await launch();
    try {
      const { code, stdout, stderr } = await serveExpectingExit({ DATABASE_URL: `sqlite:${first.dbPath}` });
      expect(code).toBe(78);
      expect(stderr).toContain(`DATABASE_URL=sqlite:${first.dbPath}`);
      expect(stderr).toContain(`in use by another taskhandle server (pid ${first.proc.pid})`);
      expect(stderr).toContain('DATABASE_URL=postgres://');
      expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(stdout).toBe('');
      // The first one serves on, untouched.
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    } finally {
      await first.stop();
    }
  });

  it('the lock dies with its process: after a kill -9 the next start opens the file at once', async () => {
    const first = await launch();
    const task = await startTask(first, skillMessage('sleep', { seconds: 0 }));
    await first.kill9();
    const second = await launch({ dbPath: first.dbPath });
    try {
      expect((await getTask(second, task.id)).id).toBe(task.id);
    } finally {
      await second.stop();
    }
  });

  it('a server stopped with SIGTERM lets the next one start on its file', async () => {
    const first = await launch();
    expect(await first.stop()).toBe(0);
    const second = await launch({ dbPath: first.dbPath });
    expect(await second.stop()).toBe(0);
  });

  it('serve --conformance keeps its tasks apart from a plain serve by default (./data/conformance.db)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskhandle-cwd-'));
    try {
      const line = await listeningLineIn(dir, ['serve', '--conformance']);
      expect(line.database).toEqual({ kind: 'sqlite', path: './data/conformance.db' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('files the settings name must be there', () => {
  const missing = join(tmpdir(), 'taskhandle-no-such-dir', 'nothing.json');

  it('a missing API_KEYS_FILE stops the start (exit 78), naming it and how to make it', async () => {
    const { code, stderr } = await serveExpectingExit({ API_KEYS_FILE: missing });
    expect(code).toBe(78);
    expect(stderr).toContain(`API_KEYS_FILE=${missing}: no such file`);
    expect(stderr).toContain('taskhandle api-keys add');
  });

  it('an API_KEYS_FILE that is a folder stops the start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskhandle-keys-'));
    const { code, stderr } = await serveExpectingExit({ API_KEYS_FILE: dir });
    expect(code).toBe(78);
    expect(stderr).toContain(`API_KEYS_FILE=${dir}: not a file`);
  });

  it('a missing JWT_JWKS_FILE stops the start (exit 78), naming it', async () => {
    const { code, stderr } = await serveExpectingExit({
      JWT_JWKS_FILE: missing,
      JWT_ISSUER: 'https://issuer.example',
      JWT_AUDIENCE: 'taskhandle',
    });
    expect(code).toBe(78);
    expect(stderr).toContain(`JWT_JWKS_FILE=${missing}: no such file`);
    expect(stderr).toContain('JWT_JWKS_URL');
  });

  it('a missing COMMANDS_FILE stops the start (exit 78), naming it', async () => {
    const { code, stderr } = await serveExpectingExit({ COMMANDS_FILE: missing });
    expect(code).toBe(78);
    expect(stderr).toContain(`COMMANDS_FILE=${missing}: no such file`);
  });
});

describe('the listening line', () => {
  it('says who may call (anonymous, this machine only), where the data is and which faces are served', async () => {
    const agent = await launch();
    try {
      const line = agent.logs.find((l) => l.msg === 'taskhandle listening');
      expect(line).toMatchObject({
        url: agent.url,
        auth: { anonymous: true, loopbackOnly: true },
        database: { kind: 'sqlite', path: agent.dbPath },
        faces: {
          a2aJsonRpc: '/',
          a2aRest: '/rest',
          jobs: '/v1/jobs',
          inbox: '/inbox',
          console: '/console',
          mcp: '/mcp',
        },
      });
      expect(line?.summary).toContain('auth: none (anonymous callers, this machine only)');
      expect(line?.summary).toContain(`data: SQLite ${agent.dbPath}`);
    } finally {
      await agent.stop();
    }
  });

  it('counts the API keys in force and names the JWT issuer', async () => {
    const agent = await launch({
      apiKeys: { alice: 'acme', bob: 'acme' },
      env: {
        JWT_JWKS_URL: 'https://issuer.example/jwks.json',
        JWT_ISSUER: 'https://issuer.example',
        JWT_AUDIENCE: 'th',
      },
    });
    try {
      const line = agent.logs.find((l) => l.msg === 'taskhandle listening');
      expect(line).toMatchObject({
        auth: {
          anonymous: false,
          apiKeys: { count: 2, file: agent.keysFile },
          jwt: { issuer: 'https://issuer.example', audience: 'th' },
        },
      });
      expect(line?.summary).toContain('API keys: 2');
      expect(line?.summary).toContain('JWT issuer https://issuer.example');
    } finally {
      await agent.stop();
    }
  });
});

/** Starts `taskhandle <args>` in `cwd` with the default DATABASE_URL; returns its listening line. */
function listeningLineIn(cwd: string, args: string[]): Promise<Record<string, unknown>> {
  mkdirSync(cwd, { recursive: true });
  const { DATABASE_URL: _, ...env } = process.env;
  const proc = spawn(process.execPath, [MAIN, ...args], {
    cwd,
    env: { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    proc.once('exit', (code) => reject(new Error(`exited with ${code} before listening: ${stderr}`)));
    createInterface({ input: proc.stdout }).on('line', (text) => {
      const entry = JSON.parse(text) as Record<string, unknown>;
      if (entry.msg !== 'taskhandle listening') return;
      proc.removeAllListeners('exit');
      proc.once('exit', () => resolve(entry));
      proc.kill('SIGTERM');
    });
  });
}

describe('while it starts', () => {
  it('validates the settings once (serve checked them, then createServer again)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskhandle-checks-'));
    const file = join(dir, 'checks');
    const hook = fileURLToPath(new URL('./fixtures/count-settings-checks.mjs', import.meta.url));
    try {
      const agent = await launch({ env: { NODE_OPTIONS: `--import=${hook}`, SETTINGS_CHECKS_FILE: file } });
      expect(await agent.stop()).toBe(0);
      expect(readFileSync(file, 'utf8')).toBe('1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a request that comes before its card is made 503 with Retry-After, never 500', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskhandle-early-'));
    const port = await freePort();
    const proc = spawn(process.execPath, [MAIN, 'serve'], {
      env: {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: `sqlite:${join(dir, 'th.db')}`,
        KEYS_DIR: join(dir, 'keys'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const logs: string[] = [];
    proc.stdout.on('data', (d: Buffer) => logs.push(d.toString()));
    try {
      // Asked as fast as the port lets us, from before it opens until the card is served.
      const answers: { status: number; retryAfter: string | null }[] = [];
      for (let ok = false; !ok; ) {
        const res = await fetch(`http://127.0.0.1:${port}/.well-known/agent-card.json`).catch(
          () => undefined,
        );
        if (!res) continue;
        await res.arrayBuffer();
        answers.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
        ok = res.status === 200;
      }
      for (const a of answers.slice(0, -1)) expect(a).toEqual({ status: 503, retryAfter: '1' });
      expect(logs.join('')).not.toContain('"level":50');
    } finally {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
