import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { skillMessage } from './a2a.js';
import { tempDbPath } from './harness.js';
import { moduleFolder } from './skill-module.js';

// The server's whole output is read here, from its first byte (harness.ts's `launch` parses stdout
// and keeps stderr to itself): every line on either stream must be one record.
const MAIN = fileURLToPath(new URL('../dist/src/main.js', import.meta.url));
const FORGED = '{"level":30,"audit":"cancel","principal":"alice","msg":"forged-by-test"}';

const { write } = moduleFolder('log-lines');
// Writes past the logger every way a skills module can from JavaScript.
const NOISY = write(
  'noisy.mjs',
  `import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
process.emitWarning('a noisy module was loaded', { type: 'DeprecationWarning', code: 'TH_NOISY_LOAD' });
export default {
  id: 'noisy', description: 'Writes to stdout and stderr', input: { type: 'object' },
  pollIntervalMs: 500, ttlMs: 60000, onInterrupt: 'rerun',
  async run() {
    process.emitWarning('odd\\n' + ${JSON.stringify(FORGED)}, { code: 'TH_NOISY', detail: 'from run' });
    process.stdout.write('a skill wrote to stdout\\n');
    process.stdout.write(Buffer.from('bytes to stdout\\n'));
    await new Promise((resolve) => process.stderr.write('a skill wrote to stderr\\n' + ${JSON.stringify(FORGED)} + '\\n', resolve));
    const worker = new Worker("console.log('a worker thread wrote'); process.emitWarning('a worker thread warned')", { eval: true });
    await once(worker, 'exit');
    return { message: 'noisy done' };
  },
};
`,
);
const LOSES = write(
  'loses.mjs',
  `export default {
  id: 'loses', description: 'Leaves a rejection nobody handles', input: { type: 'object' },
  pollIntervalMs: 500, ttlMs: 60000, onInterrupt: 'fail',
  async run() {
    setTimeout(() => Promise.reject(new Error('nobody waits for me')), 10);
    return { message: 'gone' };
  },
};
`,
);

interface Served {
  /** Every stdout line so far, as written. */
  lines: string[];
  stderr(): string;
  url: Promise<string>;
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

function serve(env: Record<string, string>): Served {
  const proc = spawn(process.execPath, [MAIN, 'serve'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${tempDbPath()}`,
      PUSH_ALLOW_PUBLIC: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stdout = '';
  let stderr = '';
  let listening: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => {
    listening = resolve;
  });
  proc.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    const complete = stdout.split('\n');
    stdout = complete.pop() ?? '';
    for (const line of complete) {
      lines.push(line);
      if (line.includes('"taskhandle listening"')) listening(String(JSON.parse(line).url));
    }
  });
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => {
    // Both pipes read to their end: every line written has been seen.
    proc.once('close', (code) => {
      if (stdout) lines.push(stdout);
      resolve(code);
    });
  });
  void exited.then(() => listening(''));
  return {
    lines,
    stderr: () => stderr,
    url,
    exited,
    stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      return exited;
    },
  };
}

function sendTo(url: string, skill: string): Promise<Response> {
  return fetch(`${url}/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: skillMessage(skill, {}) },
    }),
  });
}

type LogRecord = Record<string, unknown>;

/** Every line as a record with pino's fields; the lines that are not, as they are. */
function recordsOf(lines: string[]): { records: LogRecord[]; notRecords: string[] } {
  const records: LogRecord[] = [];
  const notRecords: string[] = [];
  for (const line of lines) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      notRecords.push(line);
      continue;
    }
    const r = parsed as LogRecord;
    const isRecord =
      typeof r === 'object' &&
      r !== null &&
      typeof r.level === 'number' &&
      typeof r.time === 'number' &&
      r.service === 'taskhandle' &&
      typeof r.msg === 'string';
    if (isRecord) records.push(r);
    else notRecords.push(line);
  }
  return { records, notRecords };
}

async function until(probe: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`no ${what} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('every line the server writes is a JSON record', () => {
  it('process warnings, writes to stdout and stderr, worker threads, express debug and grpc-js traces', async () => {
    const server = serve({
      SKILLS: NOISY,
      LOG_LEVEL: 'debug',
      // express's `debug` module writes to process.stderr; grpc-js's tracer logs through its logger.
      DEBUG: 'express:application',
      GRPC_PORT: '0',
      GRPC_TRACE: 'server',
      GRPC_VERBOSITY: 'DEBUG',
    });
    let code: number | null;
    try {
      const url = await server.url;
      expect(url, server.stderr()).not.toBe('');
      expect((await sendTo(url, 'noisy')).status).toBe(200);
      // The worker's warning comes last: on either stream, wherever it is written.
      await until(
        () => `${server.lines.join('\n')}${server.stderr()}`.includes('a worker thread warned'),
        "worker thread's warning",
      );
    } finally {
      code = await server.stop();
    }

    expect(code).toBe(0);
    expect(server.stderr()).toBe('');
    const { records, notRecords } = recordsOf(server.lines);
    expect(notRecords).toEqual([]);
    expect(records).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: 40,
          source: 'process',
          warning: {
            name: 'DeprecationWarning',
            code: 'TH_NOISY_LOAD',
            message: 'a noisy module was loaded',
          },
        }),
        expect.objectContaining({
          level: 40,
          source: 'process',
          warning: { name: 'Warning', code: 'TH_NOISY', message: `odd\n${FORGED}`, detail: 'from run' },
        }),
        expect.objectContaining({ level: 30, source: 'stdout', text: 'a skill wrote to stdout' }),
        expect.objectContaining({ level: 30, source: 'stdout', text: 'bytes to stdout' }),
        expect.objectContaining({ level: 40, source: 'stderr', text: `a skill wrote to stderr\n${FORGED}` }),
        expect.objectContaining({ level: 30, source: 'stdout', text: 'a worker thread wrote' }),
        expect.objectContaining({
          level: 40,
          source: 'stderr',
          text: expect.stringContaining('a worker thread warned'),
        }),
        expect.objectContaining({
          level: 40,
          source: 'stderr',
          text: expect.stringContaining('express:application booting'),
        }),
        expect.objectContaining({
          level: 20,
          source: 'grpc',
          args: expect.stringMatching(/\| server \| \(\d+\) Server constructed$/),
          msg: 'grpc-js logged',
        }),
        expect.objectContaining({ msg: 'stopped' }),
      ]),
    );
    // The text a skill wrote stays inside its record's field: no record of its own.
    expect(records.filter((r) => r.audit === 'cancel' || r.msg === 'forged-by-test')).toEqual([]);
  });

  it('an unhandled rejection stops the server with a fatal record, nothing on stderr', async () => {
    const server = serve({ SKILLS: LOSES, LOG_LEVEL: 'info' });
    try {
      const url = await server.url;
      expect(url, server.stderr()).not.toBe('');
      // The server may be gone before it answers.
      await sendTo(url, 'loses').catch(() => undefined);
      expect(await server.exited).toBe(1);
    } finally {
      await server.stop();
    }

    expect(server.stderr()).toBe('');
    const { records, notRecords } = recordsOf(server.lines);
    expect(notRecords).toEqual([]);
    expect(records.at(-1)).toMatchObject({
      level: 60,
      origin: 'unhandledRejection',
      err: { message: 'nobody waits for me' },
      msg: 'uncaught exception: stopping',
    });
  });
});
