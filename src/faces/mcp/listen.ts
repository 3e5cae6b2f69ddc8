import { z } from 'zod';
import { isEngineError } from '../../engine/errors.js';
import type { TaskEvent } from '../../engine/events.js';
import type { StreamItem } from '../../engine/streams.js';
import type { StreamHandle, StreamSink } from '../../engine/subscription.js';
import type { TaskRecord } from '../../engine/task.js';
import { HeldStream } from '../http/held-stream.js';
import type { SseWriter } from '../http/sse.js';
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
  // Past MAX_STREAMS: refused (-32600) before the stream opens, in a JSON answer.
  const slot = c.o.engine.reserveStream(c.owner);
  let own: number[];
  try {
    own = await ownTasks(c, taskIds);
  } catch (err) {
    slot();
    throw err;
  }
  const at: Positions = resumed ?? taskIds.map(() => undefined);
  new Listen(c, taskIds, at, slot).start(own, notifications.taskIds !== undefined);
  return STREAMED;
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

/**
 * One listen's stream: the acknowledgement, then each followed task's notifications from its own
 * subscription (the engine's, which wakes on the store's notifications, so a change made by any
 * instance is heard), and the listen's result once every task has ended or the server stops.
 * Where the client stands (each task's position and what it was shown) is the event id's.
 */
class Listen extends HeldStream<Call['res']> {
  readonly #c: Call;
  readonly #taskIds: string[];
  /** Per task, the log position whose state the client has (advanced as events are taken), and its digest. */
  readonly #at: Positions;
  readonly #slot: () => void;
  #tasks: ListenedTask[] = [];
  #following = 0;

  constructor(c: Call, taskIds: string[], at: Positions, slot: () => void) {
    super(c.res, c.o.keepAliveMs, c.o.shutdown);
    this.#c = c;
    this.#taskIds = taskIds;
    this.#at = at;
    this.#slot = slot;
  }

  /** Opens with the acknowledgement naming the tasks followed (the positions `own` names in taskIds). */
  start(own: number[], askedForTasks: boolean): void {
    const sse = this.openSse();
    // "MUST be the first message the server sends carrying the subscription's ID".
    sse.send(
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          _meta: this.#subscription(),
          notifications: askedForTasks ? { taskIds: own.map((i) => this.#taskIds[i]) } : {},
        },
      },
      this.#eventId(),
    );
    // The client left already: released with the stream.
    if (sse.closed) return;
    this.#following = own.length;
    this.#tasks = own.map(
      (i) => new ListenedTask(this, this.#c, this.#taskIds[i] as string, i, this.#at[i]?.seq),
    );
    this.hold();
    if (own.length === 0) this.stop();
  }

  /** A task of the listen has nothing more to say (it ended, expired, or the store closed at shutdown). */
  ended(): void {
    if (--this.#following === 0) this.stop();
  }

  /**
   * A notification each time what the client sees of task `i` changes (status, message, the open
   * question), the last one at the task's end. Progress alone is not a status change: the spec
   * keeps `notifications/progress` off these streams, and the task's `_meta` shows it on the next
   * notification or `tasks/get`.
   */
  item(i: number, taskId: string, item: StreamItem): undefined | Promise<unknown> {
    const seq = item.kind === 'task' ? item.seq : item.entry.seq;
    const shown = this.#at[i]?.shown ?? '';
    // Only a status, or a progress message (shown as statusMessage), changes what is shown.
    if (item.kind === 'event' && !changesStatus(item.entry.event)) {
      this.#at[i] = { seq, shown };
      return undefined;
    }
    const c = this.#c;
    const record =
      item.kind === 'task' ? Promise.resolve(item.view.record) : c.o.engine.record(c.owner, taskId);
    return this.writing(record.then((r) => this.#show(i, r, seq, shown)));
  }

  async #show(i: number, r: TaskRecord, seq: number, shown: string): Promise<void> {
    const task = extensionTask(r);
    const now = shownDigest(JSON.stringify([task.status, task.statusMessage, pendingInput(r)?.key]));
    if (now === shown) {
      this.#at[i] = { seq, shown };
      return;
    }
    const detailed = await detailedTask(this.#c, r);
    const meta = { ...(detailed._meta as object | undefined), ...this.#subscription() };
    this.#at[i] = { seq, shown: now };
    await this.send(
      { jsonrpc: '2.0', method: 'notifications/tasks', params: { ...detailed, _meta: meta } },
      this.#eventId(),
    );
  }

  protected release(): void {
    for (const task of this.#tasks) task.close();
    this.#slot();
  }

  /**
   * Every task has ended, or the server shuts down: the subscription ends gracefully, as the spec
   * says a server that ends one should (a client may listen again, here or elsewhere).
   */
  protected override finish(): void {
    const sse = this.sse as SseWriter;
    sse.send({
      jsonrpc: '2.0',
      id: this.#c.id,
      result: {
        resultType: 'complete',
        _meta: { ...resultMeta(this.#c.o.version()), ...this.#subscription() },
      },
    });
    sse.end();
  }

  #eventId(): string {
    return listenEventId(this.#taskIds, this.#at);
  }

  #subscription() {
    return { [SUBSCRIPTION_ID]: this.#c.id };
  }
}

/** One task of a listen: the sink of its subscription, which hands what it hears to the listen. */
class ListenedTask implements StreamSink {
  readonly #listen: Listen;
  readonly #taskId: string;
  readonly #i: number;
  readonly #handle: StreamHandle;

  constructor(listen: Listen, c: Call, taskId: string, i: number, afterSeq: number | undefined) {
    this.#listen = listen;
    this.#taskId = taskId;
    this.#i = i;
    // The listen holds one slot for all its tasks.
    this.#handle = c.o.engine.subscribe(c.owner, taskId, { until: 'terminal', afterSeq, slot: noSlot }, this);
  }

  item(item: StreamItem): undefined | Promise<unknown> {
    return this.#listen.item(this.#i, this.#taskId, item);
  }

  /**
   * The task ended; or it expired mid-stream, or the store closed at shutdown: this task has
   * nothing more to say; the others go on (as a held tools/call's stream ends with what stands,
   * see follow.ts).
   */
  end(): void {
    this.#listen.ended();
  }

  close(): void {
    this.#handle.close();
  }
}

const noSlot = (): void => {};
