import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { isTerminal, type TaskRecord } from '../../engine/task.js';
import { SseWriter } from '../http/sse.js';
import { type Call, relatedTask, STREAMED } from './call.js';
import { pendingInput } from './input-request.js';
import { CODE, reply, replyError } from './jsonrpc.js';
import { callToolResult, taskError } from './result.js';
import { legacyTask } from './task-shape.js';

/**
 * The id of an elicitation this face sends: which task and which question it is about, and a
 * nonce, as a request id "MUST NOT have been previously used by the requestor within the same
 * session" (2025-11-25): the same question asked again (a new `tasks/result`, a resumed stream) is
 * a new request. Ids without the nonce (sent before it) still parse.
 */
export const elicitationId = (taskId: string, key: string): string =>
  `input:${key}~${randomBytes(6).toString('base64url')}:${taskId}`;
export function parseElicitationId(id: unknown): { taskId: string; key: string } | undefined {
  if (typeof id !== 'string') return undefined;
  const match = /^input:(ask-\d+)(?:~[A-Za-z0-9_-]{1,16})?:(.+)$/.exec(id);
  return match?.[1] && match[2] ? { key: match[1], taskId: match[2] } : undefined;
}

/** What a held request follows, and how: all a resumed stream needs, carried in its event ids. */
const Followed = z.object({
  /** The request's JSON-RPC id and method: the answer at the end is to it. */
  id: z.union([z.string().max(200), z.number()]),
  method: z.enum(['tools/call', 'tasks/result']),
  taskId: z.string().min(1).max(200),
  progressToken: z.union([z.string().max(200), z.number()]).optional(),
  statusNotifications: z.boolean(),
});
export type Followed = z.infer<typeof Followed>;

/**
 * An SSE event id: the followed request (base64url JSON) and the task log's sequence number, or
 * `end` on the answer. No session holds the stream: a client that lost it sends the last id back
 * (GET /mcp with Last-Event-ID, to any instance) and the stream goes on after that event.
 */
const eventId = (f: Followed, seq: number | 'end'): string =>
  `${Buffer.from(JSON.stringify(f)).toString('base64url')}.${seq}`;

export function parseEventId(text: string): { followed: Followed; afterSeq: number | 'end' } | undefined {
  const match = /^([A-Za-z0-9_-]{1,2000})\.(\d{1,15}|end)$/.exec(text.trim());
  if (!match?.[1] || !match[2]) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(match[1], 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const followed = Followed.safeParse(json);
  if (!followed.success) return undefined;
  return { followed: followed.data, afterSeq: match[2] === 'end' ? 'end' : Number(match[2]) };
}

/**
 * The JSON-RPC answer a finished task gives its `tools/call`: the CallToolResult, or the error;
 * `tasks/result` marks it as the task's (a plain call, which asked for no task, is not marked).
 */
export async function finalAnswer(c: Call, r: TaskRecord) {
  if (r.state === 'completed' || r.state === 'rejected') {
    const view = await c.o.engine.get(c.owner, r.id, 0);
    const result = callToolResult(view, c.o.engine.artifactUrl);
    return reply(c.id, c.method === 'tasks/result' ? { ...result, _meta: relatedTask(r.id) } : result);
  }
  const { code, message } = taskError(r);
  return replyError(c.id, code, message, { taskId: r.id, status: r.state });
}

/**
 * Holds a request open until its task ends (2025-11-25 `tasks/result`, a `tools/call` without a
 * task), as an SSE stream from the task's event log: `notifications/tasks/status` at each change,
 * `notifications/progress` when the caller gave a progressToken, and, to a client that declared
 * form-mode elicitation at `initialize` (its session id says so), an `elicitation/create` when the
 * task waits for input (its id names the task and the question, so that the client's answer,
 * POSTed to any instance, finds them without a session). A client that declared none is sent none
 * (2025-11-25: "only use capabilities that were successfully negotiated"): the request stays open
 * while the question is answered another way (`tasks/update`, A2A, the inbox). Ends with the
 * request's answer. Every event has an id to resume from (`afterSeq`, see {@link parseEventId}).
 * A client that takes no SSE gets the answer alone, as JSON, if the task ends within
 * BLOCKING_TIMEOUT_MS.
 */
export async function follow(
  c: Call,
  taskId: string,
  o: {
    progressToken?: string | number;
    statusNotifications: boolean;
    afterSeq?: number;
    /** The stream's slot, when the caller took it before making the task (Engine.reserveStream). */
    slot?: () => void;
  },
): Promise<typeof STREAMED> {
  const { engine } = c.o;
  const gone = new AbortController();
  c.res.once('close', () => gone.abort());
  const signal = AbortSignal.any([gone.signal, c.o.shutdown]);
  if (!acceptsStream(c)) {
    // Without a stream nothing shows the call is alive: it is held for BLOCKING_TIMEOUT_MS at most.
    await engine.record(c.owner, taskId);
    const r = await engine.waitUntil(taskId, isTerminal, c.o.blockingTimeoutMs, signal);
    c.res.json(isTerminal(r.state) ? await finalAnswer(c, r) : stillRunning(c, taskId));
    return STREAMED;
  }
  const followed: Followed = {
    id: c.id,
    method: c.method === 'tasks/result' ? 'tasks/result' : 'tools/call',
    taskId,
    ...(o.progressToken === undefined ? {} : { progressToken: o.progressToken }),
    statusNotifications: o.statusNotifications,
  };
  // Past MAX_STREAMS: refused (-32600) before the stream opens, in a JSON answer.
  const slot = o.slot ?? engine.reserveStream(c.owner);
  try {
    return await streamTask(c, taskId, o, followed, slot, signal);
  } finally {
    slot();
  }
}

/** Whether the request takes an SSE stream (else a held call answers as JSON). */
export const acceptsStream = (c: Call): boolean => (c.req.headers.accept ?? '').includes('text/event-stream');

async function streamTask(
  c: Call,
  taskId: string,
  o: { progressToken?: string | number; statusNotifications: boolean; afterSeq?: number },
  followed: Followed,
  slot: () => void,
  signal: AbortSignal,
): Promise<typeof STREAMED> {
  const { engine } = c.o;
  const first = await engine.record(c.owner, taskId); // not found: refused before the stream opens
  const sse = new SseWriter(c.res, c.o.keepAliveMs);
  sse.prime(eventId(followed, o.afterSeq ?? first.lastSeq));
  let shown = '';
  let progress = '';
  let asked = '';
  try {
    for await (const item of engine.stream(c.owner, taskId, {
      until: 'terminal',
      afterSeq: o.afterSeq,
      signal,
      slot,
    })) {
      const r = item.kind === 'task' ? item.view.record : await engine.record(c.owner, taskId);
      const id = eventId(followed, item.kind === 'task' ? item.seq : item.entry.seq);
      const task = legacyTask(r);
      const now = JSON.stringify([task.status, task.statusMessage]);
      if (o.statusNotifications && now !== shown) {
        shown = now;
        sse.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task }, id);
      }
      if (o.progressToken !== undefined && r.progress && JSON.stringify(r.progress) !== progress) {
        progress = JSON.stringify(r.progress);
        sse.send(
          {
            jsonrpc: '2.0',
            method: 'notifications/progress',
            params: {
              progressToken: o.progressToken,
              progress: r.progress.percent ?? 0,
              total: 100,
              ...(r.progress.message ? { message: r.progress.message } : {}),
            },
          },
          id,
        );
      }
      const pending = c.declared.formElicitation ? pendingInput(r) : undefined;
      if (pending && pending.key !== asked) {
        asked = pending.key;
        const params = { ...pending.request.params, _meta: relatedTask(taskId) };
        sse.send(
          { jsonrpc: '2.0', id: elicitationId(taskId, pending.key), method: pending.request.method, params },
          id,
        );
      }
      await sse.drained();
    }
  } catch {
    // The task expired or the store closed mid-stream: answered below with what stands.
  }
  const r = await engine.record(c.owner, taskId).catch(() => undefined);
  if (r && isTerminal(r.state)) sse.send(await finalAnswer(c, r), eventId(followed, 'end'));
  // Shutdown: the stream just ends; the client resumes it from its last event id, on another
  // instance or after the restart. Expiry: the task is gone, and so is its answer.
  else if (!r) sse.send(replyError(c.id, CODE.invalidParams, `Task ${taskId} expired before it ended`));
  sse.end();
  return STREAMED;
}

/** A call held as long as it may be: the task goes on; say how to follow it. */
const stillRunning = (c: Call, taskId: string) =>
  replyError(
    c.id,
    CODE.internalError,
    `Task ${taskId} is still running: poll it with tasks/get, or call with Accept: text/event-stream (or as a task) to wait for it`,
    { taskId },
  );
