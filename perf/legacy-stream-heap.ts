import { fork } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * What one open v0.3 stream holds on the server's heap, for each v0.3 streaming call: JSON-RPC
 * message/stream and tasks/resubscribe, REST `POST /v1/message:stream` and `GET
 * /v1/tasks/{id}:subscribe`. The server (a build's dist/src/index.js, so that two builds compare)
 * runs in a child process with --expose-gc, one job at a time, held by a sleeping task: every task
 * the sends make stays queued and silent. N streams of a kind are opened and read to their first
 * event; the heap after full GCs with them open, minus the heap before (a send's task counted in),
 * and minus the heap once they are closed (their tasks stay), over N, is what each held.
 *
 *   npx tsc -p tsconfig.perf.json && node dist/perf/legacy-stream-heap.js dist/src/index.js [N]
 */
const self = fileURLToPath(import.meta.url);

if (process.argv[2] === 'serve') {
  const { createServer } = (await import(pathToFileURL(process.argv[3] as string).href)) as {
    createServer: (o: object) => Promise<{ url: string }>;
  };
  const server = await createServer({
    port: 0,
    host: '127.0.0.1',
    database: 'sqlite::memory:',
    logLevel: 'warn',
    env: { RUNNER_CONCURRENCY: '1', SSE_KEEPALIVE_MS: '600000', MAX_STREAMS: '0' },
  });
  const gc = (globalThis as { gc?: () => void }).gc as () => void;
  process.on('message', async () => {
    for (let i = 0; i < 4; i++) {
      gc();
      await sleep(50);
    }
    process.send?.({ heap: process.memoryUsage().heapUsed });
  });
  process.send?.({ url: server.url });
} else {
  const [build, n] = [process.argv[2] as string, Number(process.argv[3] ?? 1000)];
  const child = fork(self, ['serve', build], { execArgv: ['--expose-gc'] });
  const next = () => new Promise<Record<string, unknown>>((resolve) => child.once('message', resolve));
  const url = (await next()).url as string;
  const heap = async () => {
    child.send('heap');
    return (await next()).heap as number;
  };
  const rpc = (method: string, params: unknown) =>
    fetch(`${url}/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
  const message = () => ({
    kind: 'message',
    messageId: crypto.randomUUID(),
    role: 'user',
    parts: [{ kind: 'data', data: { skill: 'sleep', input: { seconds: 3000 } } }],
  });
  const sent = async () => {
    const res = await rpc('message/send', { message: message(), configuration: { blocking: false } });
    return ((await res.json()) as { result: { id: string } }).result.id;
  };
  await sent(); // holds the one runner slot: every task below stays queued
  const queued = await sent();
  const restSend = () =>
    fetch(`${url}/rest/v1/message:stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        message: {
          messageId: crypto.randomUUID(),
          role: 'ROLE_USER',
          content: [{ data: { data: { skill: 'sleep', input: { seconds: 3000 } } } }],
        },
      }),
    });
  const kinds: [string, () => Promise<Response>][] = [
    ['JSON-RPC message/stream', () => rpc('message/stream', { message: message() })],
    ['JSON-RPC tasks/resubscribe', () => rpc('tasks/resubscribe', { id: queued })],
    ['REST POST /v1/message:stream', restSend],
    ['REST GET /v1/tasks/{id}:subscribe', () => fetch(`${url}/rest/v1/tasks/${queued}:subscribe`)],
  ];
  // Twice each: the first round warms the code paths (their compiled code is heap too).
  for (const round of [1, 2]) {
    for (const [label, open] of kinds) {
      const before = await heap();
      const streams = await Promise.all(
        Array.from({ length: n }, async () => {
          const res = await open();
          if (!res.headers.get('content-type')?.startsWith('text/event-stream'))
            throw new Error(`${label}: ${res.status} ${await res.text()}`);
          const reader = (res.body as ReadableStream<Uint8Array>).getReader();
          await reader.read();
          return reader;
        }),
      );
      await sleep(500);
      const during = await heap();
      await Promise.all(streams.map((r) => r.cancel()));
      await sleep(2000);
      const after = await heap();
      if (round === 2)
        console.log(
          `${label}: ${n} open, ${((during - before) / n / 1024).toFixed(1)} KB each over the heap before ` +
            `(${((during - after) / n / 1024).toFixed(1)} KB over the heap once closed, their tasks left)`,
        );
    }
  }
  child.kill();
}
