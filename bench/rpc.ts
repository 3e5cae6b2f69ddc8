import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';

/** JSON-RPC v1.0 requests the scenarios send, and a small client for setup calls. */

export const RPC_HEADERS = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' } as const;

/** A long job: the `sleep` skill for an hour (the SDK reference ignores the skill and keeps it working). */
export const LONG_JOB = { data: { skill: 'sleep', input: { seconds: 3600 } } };
/** A job that finishes at once (taskhandle), for tasks that are done when they are retained. */
export const INSTANT_JOB = { data: { skill: 'sleep', input: { seconds: 0 } } };

let nextId = 0;
const rpc = (method: string, params: unknown): string =>
  JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method, params });

/**
 * A non-blocking SendMessage; every call gets a new messageId (else the server deduplicates).
 * `configuration` adds to `returnImmediately` (an inline webhook, say).
 */
export function sendBody(
  part: object = LONG_JOB,
  prefix = randomUUID(),
  configuration: object = {},
): () => string {
  let n = 0;
  return () =>
    rpc('SendMessage', {
      message: { messageId: `${prefix}-${++n}`, role: 'ROLE_USER', parts: [part] },
      configuration: { returnImmediately: true, ...configuration },
    });
}

/** A SendStreamingMessage of `part`, a new messageId each call. */
export function sendStreamBody(part: object, prefix = randomUUID()): () => string {
  let n = 0;
  return () =>
    rpc('SendStreamingMessage', {
      message: { messageId: `${prefix}-${++n}`, role: 'ROLE_USER', parts: [part] },
    });
}

export const getBody = (id: string): string => rpc('GetTask', { id, historyLength: 0 });
export const cancelBody = (id: string): string => rpc('CancelTask', { id });
export const subscribeBody = (id: string): string => rpc('SubscribeToTask', { id });

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

// biome-ignore lint/suspicious/noExplicitAny: replies are read loosely, checked where used
export type RpcReply = { result?: any; error?: { code: number; message: string } };

/** One JSON-RPC POST, its answer read whole as text; rejects on a connection error only. */
export function postText(
  url: string,
  body: string,
  headers: Record<string, string> = {},
  via: Agent = agent,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent: via, headers: { ...RPC_HEADERS, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** One JSON-RPC call (`headers`: credentials, say); rejects on an HTTP or JSON-RPC error. */
export async function call(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<RpcReply> {
  const { status, text } = await postText(url, body, headers);
  const reply = JSON.parse(text) as RpcReply;
  if (status !== 200 || reply.error) throw new Error(`${status} ${text.slice(0, 300)}`);
  return reply;
}

/**
 * Creates `count` tasks, `concurrency` requests at a time (as the caller `headers` authenticate);
 * returns their ids in creation order.
 */
export async function createTasks(
  url: string,
  count: number,
  part: object = LONG_JOB,
  concurrency = 32,
  headers: Record<string, string> = {},
): Promise<string[]> {
  const body = sendBody(part);
  const ids: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const reply = await call(url, body(), headers);
      const id = reply.result?.task?.id;
      if (typeof id !== 'string') throw new Error(`SendMessage returned no task: ${JSON.stringify(reply)}`);
      ids[i] = id;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return ids;
}

/** Polls GetTask until every task is in a terminal state (or `timeoutMs` passes). */
export async function waitUntilDone(url: string, ids: readonly string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const id of ids) {
    for (;;) {
      const state = (await call(url, getBody(id))).result?.status?.state as string | undefined;
      if (state && /COMPLETED|CANCELED|FAILED|REJECTED/.test(state)) break;
      if (Date.now() > deadline) throw new Error(`task ${id} still ${state} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
