/**
 * Heap per open, idle v1.0 SendStreamingMessage stream, on the path served from the engine's
 * subscription (no tenant) and on the SDK's transport (a tenant takes it), JSON-RPC and REST. Each
 * path gets a fresh server whose one runner slot a long job holds, so every stream's task waits in
 * the queue and the stream is idle; the heap is read after full collections (the server runs with
 * --expose-gc and prints it on SIGUSR2), before and after opening the streams.
 *
 *   npm run build && npm run build -w bench && node bench/dist/send-stream-heap.js [streams]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../dist/src/main.js', import.meta.url));
/** Collects the garbage and prints the heap in use (the server logs what reaches its stderr). */
const PROBE = `process.on('SIGUSR2', () => { for (let i = 0; i < 4; i++) gc(); process.stderr.write('HEAP ' + process.memoryUsage().heapUsed + '\\n'); });`;

type Face = 'jsonrpc' | 'rest';
type Path = 'direct' | 'sdk';

interface Server {
  url: URL;
  heap(): Promise<number>;
  proc: ChildProcess;
}

async function start(): Promise<Server> {
  const db = join(mkdtempSync(join(tmpdir(), 'send-stream-heap-')), 'tasks.db');
  const proc = spawn(
    process.execPath,
    ['--expose-gc', `--import=data:text/javascript,${encodeURIComponent(PROBE)}`, MAIN, 'serve'],
    {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: `sqlite:${db}`,
        LOG_LEVEL: 'info',
        RUNNER_CONCURRENCY: '1',
        MAX_STREAMS: '0',
        MAX_ACTIVE_TASKS: '0',
        SSE_KEEPALIVE_MS: '600000',
        SHUTDOWN_TIMEOUT_MS: '500',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let heard: ((bytes: number) => void) | undefined;
  const url = await new Promise<URL>((resolve) => {
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      const heap = /HEAP (\d+)/.exec(line);
      if (heap) heard?.(Number(heap[1]));
      else if (line.includes('"taskhandle listening"')) resolve(new URL(JSON.parse(line).url));
    });
  });
  const heap = () =>
    new Promise<number>((resolve) => {
      heard = resolve;
      proc.kill('SIGUSR2');
    });
  return { url, heap, proc };
}

const agent = new http.Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

/** Opens a streaming send of a `sleep` job; resolves with its request once the first event is in. */
function open(server: Server, face: Face, path: Path, seconds: number): Promise<http.ClientRequest> {
  const message = {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ data: { skill: 'sleep', input: { seconds } } }],
  };
  const params = path === 'sdk' && face === 'jsonrpc' ? { message, tenant: 't1' } : { message };
  const body =
    face === 'jsonrpc' ? { jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params } : params;
  const route = face === 'jsonrpc' ? '/' : `/rest${path === 'sdk' ? '/t1' : ''}/message:stream`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: server.url.hostname,
        port: server.url.port,
        path: route,
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Accept: 'text/event-stream' },
      },
      (res) => {
        let got = '';
        res.on('data', (chunk) => {
          got += chunk;
          if (!got.includes('\n\n')) return;
          res.removeAllListeners('data');
          res.pause();
          resolve(req);
        });
        res.on('end', () => reject(new Error(`the stream ended: ${got}`)));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function measure(face: Face, path: Path, streams: number) {
  const server = await start();
  try {
    await open(server, face, path, 3600);
    // What is made once (codecs, caches, compiled code) is not counted.
    for (let i = 0; i < 50; i++) (await open(server, face, path, 1)).destroy();
    await sleep(1500);
    const before = await server.heap();
    const held: http.ClientRequest[] = [];
    while (held.length < streams) {
      const batch = Math.min(20, streams - held.length);
      held.push(...(await Promise.all(Array.from({ length: batch }, () => open(server, face, path, 1)))));
    }
    await sleep(1500);
    const after = await server.heap();
    for (const req of held) req.destroy();
    return {
      face,
      path,
      streams,
      heapBeforeMB: before / 1e6,
      heapAfterMB: after / 1e6,
      bytesPerStream: Math.round((after - before) / streams),
    };
  } finally {
    server.proc.kill('SIGKILL');
  }
}

const streams = Number(process.argv[2] ?? 1000);
for (const face of ['jsonrpc', 'rest'] as const)
  for (const path of ['direct', 'sdk'] as const)
    console.log(JSON.stringify(await measure(face, path, streams)));
process.exit(0);
