import { isTerminal, type TaskRecord } from '../../engine/task.js';
import { SseWriter } from '../http/sse.js';
import { type Call, relatedTask, STREAMED } from './call.js';
import { pendingInput } from './input-request.js';
import { CODE, reply, replyError } from './jsonrpc.js';
import { callToolResult, taskError } from './result.js';
import { legacyTask } from './task-shape.js';

/** The id of an elicitation this face sends: which task and which question it is about. */
export const elicitationId = (taskId: string, key: string): string => `input:${key}:${taskId}`;
export function parseElicitationId(id: unknown): { taskId: string; key: string } | undefined {
  if (typeof id !== 'string') return undefined;
  const match = /^input:(ask-\d+):(.+)$/.exec(id);
  return match?.[1] && match[2] ? { key: match[1], taskId: match[2] } : undefined;
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
 * `notifications/progress` when the caller gave a progressToken, and an `elicitation/create` when
 * the task waits for input (its id names the task and the question, so that the client's answer,
 * POSTed to any instance, finds them without a session). Ends with the request's answer. A client
 * that takes no SSE gets the answer alone, as JSON.
 */
export async function follow(
  c: Call,
  taskId: string,
  o: { progressToken?: string | number; statusNotifications: boolean },
): Promise<typeof STREAMED> {
  const { engine } = c.o;
  const gone = new AbortController();
  c.res.once('close', () => gone.abort());
  const signal = AbortSignal.any([gone.signal, c.o.shutdown]);
  if (!(c.req.headers.accept ?? '').includes('text/event-stream')) {
    // Without a stream nothing shows the call is alive: it is held for BLOCKING_TIMEOUT_MS at most.
    await engine.record(c.owner, taskId);
    const r = await engine.waitUntil(taskId, isTerminal, c.o.blockingTimeoutMs, signal);
    c.res.json(isTerminal(r.state) ? await finalAnswer(c, r) : stillRunning(c, taskId));
    return STREAMED;
  }
  const sse = new SseWriter(c.res, c.o.keepAliveMs);
  let shown = '';
  let progress = '';
  let asked = '';
  try {
    for await (const item of engine.stream(c.owner, taskId, { until: 'terminal', signal })) {
      const r = item.kind === 'task' ? item.view.record : await engine.record(c.owner, taskId);
      const task = legacyTask(r);
      const now = JSON.stringify([task.status, task.statusMessage]);
      if (o.statusNotifications && now !== shown) {
        shown = now;
        sse.send({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task });
      }
      if (o.progressToken !== undefined && r.progress && JSON.stringify(r.progress) !== progress) {
        progress = JSON.stringify(r.progress);
        sse.send({
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: {
            progressToken: o.progressToken,
            progress: r.progress.percent ?? 0,
            total: 100,
            ...(r.progress.message ? { message: r.progress.message } : {}),
          },
        });
      }
      const pending = pendingInput(r);
      if (pending && pending.key !== asked) {
        asked = pending.key;
        sse.send({
          jsonrpc: '2.0',
          id: elicitationId(taskId, pending.key),
          method: pending.request.method,
          params: { ...pending.request.params, _meta: relatedTask(taskId) },
        });
      }
      await sse.drained();
    }
  } catch {
    // The task expired or the store closed mid-stream: answered below with what stands.
  }
  const r = await engine.record(c.owner, taskId).catch(() => undefined);
  sse.send(r && isTerminal(r.state) ? await finalAnswer(c, r) : stopped(c, taskId));
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

/** The stream ended before the task (shutdown, expiry): the task goes on; say how to find it. */
const stopped = (c: Call, taskId: string) =>
  replyError(
    c.id,
    CODE.internalError,
    `The server stopped waiting (shutdown or expiry) before task ${taskId} ended; poll it with tasks/get or wait on tasks/result again`,
    { taskId },
  );
