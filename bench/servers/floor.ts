import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The node:http floor: reads the whole JSON-RPC body, parses it and answers a small JSON object.
 * No store, no protocol: what any server on this machine pays at least per request.
 *
 * For the fan-out scenario it also holds streams: SubscribeToTask (any id) answers an SSE stream
 * with one event of a task's usual size and keeps it open; CancelTask writes the terminal status to
 * that id's streams and ends them. What node:http itself holds per open stream, and what one write
 * to each costs, with nothing of a task server around them.
 *
 * For the idle-workers scenario it holds long polls: `POST /v1/workers/claims` answers `{"jobs":[]}`
 * once its `waitMs` ran out (a timer per request), as a worker server with no task does. What
 * node:http itself holds per waiting request.
 */
const streams = new Map<string, Set<ServerResponse>>();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let call: { id?: unknown; method?: unknown; params?: { id?: unknown } } = {};
    try {
      call = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      // answer anyway: the floor measures transport and parsing, not validation
    }
    if (req.url === '/v1/workers/claims') return wait(res, Number((call as { waitMs?: unknown }).waitMs));
    const id = call.id ?? null;
    const taskId = String(call.params?.id ?? '');
    if (call.method === 'SubscribeToTask') return hold(res, id, taskId);
    if (call.method === 'CancelTask') end(id, taskId);
    const text = JSON.stringify({ jsonrpc: '2.0', id, result: { ok: true } });
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  });
});

function hold(res: ServerResponse, id: unknown, taskId: string): void {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  res.write(event(id, taskId, 'TASK_STATE_WORKING'));
  const held = streams.get(taskId) ?? new Set<ServerResponse>();
  streams.set(taskId, held);
  held.add(res);
  res.on('close', () => held.delete(res));
}

function wait(res: ServerResponse, waitMs: number): void {
  const timer = setTimeout(
    () => {
      const text = '{"jobs":[]}';
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
    },
    Number.isFinite(waitMs) ? waitMs : 30_000,
  );
  res.on('close', () => clearTimeout(timer));
}

function end(id: unknown, taskId: string): void {
  const held = streams.get(taskId);
  streams.delete(taskId);
  const text = event(id, taskId, 'TASK_STATE_CANCELED');
  for (const res of held ?? []) res.end(text);
}

/** A status event of the size a task server's first event has (a task with its handle metadata). */
const event = (id: unknown, taskId: string, state: string): string =>
  `data: ${JSON.stringify({
    jsonrpc: '2.0',
    id,
    result: {
      task: {
        id: taskId,
        contextId: `${taskId}-context`,
        status: { state, timestamp: new Date().toISOString() },
        metadata: { createdAt: new Date().toISOString(), pollIntervalMs: 1000, ttlMs: 86_400_000 },
      },
    },
  })}\n\n`;

server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ msg: 'floor listening', url: `http://127.0.0.1:${port}` }));
});
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
