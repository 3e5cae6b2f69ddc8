import { z } from 'zod';
import { isEngineError } from '../../engine/errors.js';
import type { TaskEvent } from '../../engine/events.js';
import { SseWriter } from '../http/sse.js';
import { type Answer, type Call, STREAMED } from './call.js';
import { acceptsStream } from './follow.js';
import { pendingInput } from './input-request.js';
import { CODE, paramsOf, RpcRefusal } from './jsonrpc.js';
import { listenEventId, type Positions, parseListenEventId, shownDigest } from './listen-id.js';
import { missingTasksExtension, resultMeta } from './revision.js';
import { extensionTask } from './task-shape.js';
import { detailedTask } from './tasks.js';

/** The most task ids one listen may follow: each is a log followed for as long as the stream lasts. */
export const MAX_LISTEN_TASKS = 100;
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/**
 * 2026-07-28's SubscriptionFilter with SEP-2663's `taskIds`. Of the rest this server has nothing
 * to send (its tool list changes only with a restart; it has no prompts or resources), so the
 * acknowledgement leaves them out, as the spec says it must; other keys are ignored.
 */
const ListenParams = z.object({
  notifications: z.object({
    taskIds: z.array(z.string().min(1).max(200)).max(MAX_LISTEN_TASKS).optional(),
    toolsListChanged: z.boolean().optional(),
    promptsListChanged: z.boolean().optional(),
    resourcesListChanged: z.boolean().optional(),
    resourceSubscriptions: z.array(z.string().max(2000)).max(MAX_LISTEN_TASKS).optional(),
  }),
});

/**
 * `subscriptions/listen` (2026-07-28) with the Tasks extension's `taskIds`: an SSE stream that
 * carries `notifications/tasks` (the DetailedTask, as `tasks/get` would answer at that moment)
 * each time a followed task's status, message or question changes, instead of polling
 * `tasks/get`. Only the caller's own tasks are followed: any other id (missing, expired, someone
 * else's, or one the caller may only answer as its approver, whose answer's acknowledgement is all
 * it gets) is left out of the acknowledgement, exactly as a missing one. The stream counts as one
 * of the caller's streams (MAX_STREAMS), refused before it opens past that. It starts with each
 * task's current state, and ends with the listen's result once every task has ended (nothing more
 * can come) or the server shuts down. Any instance serves it (the store's notifications reach
 * every instance), and it resumes from `Last-Event-ID` (see listen-id.ts).
 */
export async function listen(c: Call): Promise<Answer> {
  const { notifications } = paramsOf(
    ListenParams,
    c.params,
    '{"notifications": {"taskIds"?: string[] (at most 100)}}',
  );
  const taskIds = [...new Set(notifications.taskIds ?? [])];
  if (taskIds.length > 0 && c.revision.kind === 'stateless' && !c.revision.tasksExtension) {
    throw missingTasksExtension('Task status notifications (notifications.taskIds) are');
  }
  if (!acceptsStream(c)) {
    throw new RpcRefusal(
      CODE.invalidRequest,
      'subscriptions/listen answers with a stream: send Accept: application/json, text/event-stream',
      undefined,
      406,
    );
  }
  const last = c.req.get('Last-Event-ID');
  const resumed = last === undefined ? undefined : parseListenEventId(last, taskIds);
  if (last !== undefined && !resumed) {
    throw new RpcRefusal(
      CODE.invalidRequest,
      'Last-Event-ID is not an event id of this listen: resume with the same notifications.taskIds in the same order, or listen again without it to get each task as it stands',
      undefined,
      400,
    );
  }
  const gone = new AbortController();
  c.res.once('close', () => gone.abort());
  // Past MAX_STREAMS: refused (-32600) before the stream opens, in a JSON answer.
  const slot = c.o.engine.reserveStream(c.owner);
  try {
    const own = await ownTasks(c, taskIds);
    const at: Positions = resumed ?? taskIds.map(() => undefined);
    const sse = new SseWriter(c.res, c.o.keepAliveMs);
    const eventId = () => listenEventId(taskIds, at);
    const subscription = { [SUBSCRIPTION_ID]: c.id };
    // "MUST be the first message the server sends carrying the subscription's ID".
    sse.send(
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          _meta: subscription,
          notifications: notifications.taskIds ? { taskIds: own.map((i) => taskIds[i]) } : {},
        },
      },
      eventId(),
    );
    const signal = AbortSignal.any([gone.signal, c.o.shutdown]);
    await Promise.all(own.map((i) => followTask(c, sse, i, { taskIds, at, eventId, signal })));
    // Every task has ended, or the server shuts down: the subscription ends gracefully, as the
    // spec says a server that ends one should (a client may listen again, here or elsewhere).
    sse.send({
      jsonrpc: '2.0',
      id: c.id,
      result: { resultType: 'complete', _meta: { ...resultMeta(c.o.version()), ...subscription } },
    });
    sse.end();
    return STREAMED;
  } finally {
    slot();
  }
}

const changesStatus = (e: TaskEvent): boolean =>
  e.kind === 'status' || (e.kind === 'progress' && e.progress.message !== undefined);

/** The positions (in `taskIds`) of the caller's own tasks: any other is answered as missing. */
async function ownTasks(c: Call, taskIds: string[]): Promise<number[]> {
  const found = await Promise.all(
    taskIds.map((id) =>
      c.o.engine.record(c.owner, id).then(
        () => true,
        (err: unknown) => {
          if (isEngineError(err) && err.code === 'task-not-found') return false;
          throw err;
        },
      ),
    ),
  );
  return taskIds.flatMap((_, i) => (found[i] ? [i] : []));
}

interface Listening {
  taskIds: string[];
  /** Per task, the log position whose state the client has (advanced as events are taken), and its digest. */
  at: Positions;
  eventId: () => string;
  signal: AbortSignal;
}

/**
 * One task of a listen, from its log (the engine's stream, which wakes on the store's
 * notifications, so a change made by any instance is heard): a notification each time what the
 * client sees changes (status, message, the open question), the last one at the task's end.
 * Progress alone is not a status change: the spec keeps `notifications/progress` off these
 * streams, and the task's `_meta` shows it on the next notification or `tasks/get`.
 */
async function followTask(c: Call, sse: SseWriter, i: number, l: Listening): Promise<void> {
  const taskId = l.taskIds[i] as string;
  try {
    for await (const item of c.o.engine.stream(c.owner, taskId, {
      until: 'terminal',
      afterSeq: l.at[i]?.seq,
      signal: l.signal,
      // The listen holds one slot for all its tasks.
      slot: () => {},
    })) {
      const seq = item.kind === 'task' ? item.seq : item.entry.seq;
      const shown = l.at[i]?.shown ?? '';
      // Only a status, or a progress message (shown as statusMessage), changes what is shown.
      if (item.kind === 'event' && !changesStatus(item.entry.event)) {
        l.at[i] = { seq, shown };
        continue;
      }
      const r = item.kind === 'task' ? item.view.record : await c.o.engine.record(c.owner, taskId);
      const task = extensionTask(r);
      const now = shownDigest(JSON.stringify([task.status, task.statusMessage, pendingInput(r)?.key]));
      if (now === shown) {
        l.at[i] = { seq, shown };
        continue;
      }
      const detailed = await detailedTask(c, r);
      const meta = { ...(detailed._meta as object | undefined), [SUBSCRIPTION_ID]: c.id };
      l.at[i] = { seq, shown: now };
      sse.send(
        { jsonrpc: '2.0', method: 'notifications/tasks', params: { ...detailed, _meta: meta } },
        l.eventId(),
      );
      await sse.drained();
    }
  } catch {
    // The task expired mid-stream, or the store closed at shutdown: this task has nothing more to
    // say; the others go on (as a held tools/call's stream ends with what stands, see follow.ts).
  }
}
