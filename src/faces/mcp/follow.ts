import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { StreamItem } from '../../engine/streams.js';
import { isTerminal, type TaskRecord } from '../../engine/task.js';
import { callerGone } from '../http/caller-gone.js';
import { TaskStream } from '../http/held-stream.js';
import type { SseWriter } from '../http/sse.js';
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
  o: Following & {
    /** The stream's slot, when the caller took it before making the task (Engine.reserveStream). */
    slot?: () => void;
  },
): Promise<typeof STREAMED> {
  const { engine } = c.o;
  if (!acceptsStream(c)) {
    // Without a stream nothing shows the call is alive: it is held for BLOCKING_TIMEOUT_MS at most.
    await engine.record(c.owner, taskId);
    const r = await engine.waitUntil(
      taskId,
      isTerminal,
      c.o.blockingTimeoutMs,
      callerGone(c.res, c.o.shutdown),
    );
    c.res.json(isTerminal(r.state) ? await finalAnswer(c, r) : stillRunning(c, taskId));
    return STREAMED;
  }
  // Past MAX_STREAMS, or no such task of the caller's: refused (-32600, -32602) before the stream
  // opens, in a JSON answer.
  await new FollowedTask(c, taskId, o).follow(o.slot);
  return STREAMED;
}

/** Whether the request takes an SSE stream (else a held call answers as JSON). */
export const acceptsStream = (c: Call): boolean => (c.req.headers.accept ?? '').includes('text/event-stream');

interface Following {
  progressToken?: string | number;
  statusNotifications: boolean;
  /** A resumed stream: what followed this event of the task's log. */
  afterSeq?: number;
}

/**
 * A held request's stream, the sink of its task's subscription: for each item, what changed of
 * what the client is shown (the record as it then stands), each event with the id to resume from.
 */
class FollowedTask extends TaskStream<Call['res']> {
  readonly #c: Call;
  readonly #taskId: string;
  readonly #o: Following;
  readonly #followed: Followed;
  #shown = '';
  #progress = '';
  #asked = '';

  constructor(c: Call, taskId: string, o: Following) {
    super(c.res, c.o.keepAliveMs, c.o.shutdown);
    this.#c = c;
    this.#taskId = taskId;
    this.#o = o;
    this.#followed = {
      id: c.id,
      method: c.method === 'tasks/result' ? 'tasks/result' : 'tools/call',
      taskId,
      ...(o.progressToken === undefined ? {} : { progressToken: o.progressToken }),
      statusNotifications: o.statusNotifications,
    };
  }

  follow(slot: (() => void) | undefined): Promise<void> {
    const { afterSeq } = this.#o;
    return this.start(this.#c.o.engine, this.#c.owner, this.#taskId, { until: 'terminal', afterSeq, slot });
  }

  override open(): void {
    super.open();
    // The first event: where a client that loses the stream at once resumes from.
    const { afterSeq } = this.#o;
    if (afterSeq !== undefined) this.sse?.prime(eventId(this.#followed, afterSeq));
  }

  item(item: StreamItem): undefined | Promise<unknown> {
    if (item.kind === 'task') {
      this.sse?.prime(eventId(this.#followed, item.seq));
      return this.#show(item.view.record, item.seq);
    }
    const { seq } = item.entry;
    return this.writing(this.#c.o.engine.record(this.#c.owner, this.#taskId).then((r) => this.#show(r, seq)));
  }

  /** Its notifications of what changed in `r` (status, progress, the open question), from log position `seq`. */
  #show(r: TaskRecord, seq: number): undefined | Promise<void> {
    const sse = this.sse as SseWriter;
    const { progressToken, statusNotifications } = this.#o;
    const id = eventId(this.#followed, seq);
    const task = legacyTask(r);
    const now = JSON.stringify([task.status, task.statusMessage]);
    if (statusNotifications && now !== this.#shown) {
      this.#shown = now;
      sse.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task }, id);
    }
    if (progressToken !== undefined && r.progress && JSON.stringify(r.progress) !== this.#progress) {
      this.#progress = JSON.stringify(r.progress);
      sse.send(
        {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: {
            progressToken,
            progress: r.progress.percent ?? 0,
            total: 100,
            ...(r.progress.message ? { message: r.progress.message } : {}),
          },
        },
        id,
      );
    }
    const pending = this.#c.declared.formElicitation ? pendingInput(r) : undefined;
    if (pending && pending.key !== this.#asked) {
      this.#asked = pending.key;
      const params = { ...pending.request.params, _meta: relatedTask(this.#taskId) };
      sse.send(
        {
          jsonrpc: '2.0',
          id: elicitationId(this.#taskId, pending.key),
          method: pending.request.method,
          params,
        },
        id,
      );
    }
    return this.drained();
  }

  /**
   * The task ended, expired, or the store closed mid-stream, or the server stops: answered with
   * what stands. At shutdown the stream just ends; the client resumes it from its last event id,
   * on another instance or after the restart. Expiry: the task is gone, and so is its answer.
   */
  protected override finish(): void {
    void this.#answer().finally(() => this.sse?.end());
  }

  async #answer(): Promise<void> {
    const c = this.#c;
    const r = await c.o.engine.record(c.owner, this.#taskId).catch(() => undefined);
    if (!r)
      this.sse?.send(replyError(c.id, CODE.invalidParams, `Task ${this.#taskId} expired before it ended`));
    else if (isTerminal(r.state)) {
      // The store closing now (shutdown) leaves the answer to the resumed stream.
      const answer = await finalAnswer(c, r).catch(() => undefined);
      if (answer) this.sse?.send(answer, eventId(this.#followed, 'end'));
    }
  }
}

/** A call held as long as it may be: the task goes on; say how to follow it. */
const stillRunning = (c: Call, taskId: string) =>
  replyError(
    c.id,
    CODE.internalError,
    `Task ${taskId} is still running: poll it with tasks/get, or call with Accept: text/event-stream (or as a task) to wait for it`,
    { taskId },
  );
