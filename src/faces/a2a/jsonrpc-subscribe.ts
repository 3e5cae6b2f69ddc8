import type { ServerResponse } from 'node:http';
import { StreamResponse as SdkStreamCodec } from '@a2a-js/sdk';
import type { Engine } from '../../engine/engine.js';
import type { LoggedEvent } from '../../engine/events.js';
import { type StreamItem, settled } from '../../engine/streams.js';
import type { StreamHandle, StreamSink } from '../../engine/subscription.js';
import type { OpenSubscriptions } from '../http/open-subscriptions.js';
import { SseWriter, untilDrained } from '../http/sse.js';
import { toSdkTask, toStreamResponse, withEventId } from './wire.js';

/** What the v1.0 SubscribeToTask path needs from the JSON-RPC endpoint. */
export interface SubscribeOptions {
  engine: Engine;
  keepAliveMs: number;
  /** Answers a stream that failed before it started: the error as a plain JSON-RPC response. */
  refuse(res: ServerResponse, requestId: RequestId, err: unknown): void;
  /** A failure once the stream has started: its error event (a JSON-RPC response). */
  failure(requestId: RequestId, err: unknown): unknown;
  /** Streams that are open now, ended at shutdown. */
  open: OpenSubscriptions;
}

type RequestId = string | number | null;

/** The task id of a v1.0 SubscribeToTask this path serves: a plain id, no tenant (else the SDK's path). */
export function subscribeTarget(params: unknown): string | undefined {
  const p = params as { id?: unknown; tenant?: unknown };
  if (typeof p !== 'object' || p === null || typeof p.id !== 'string' || !p.id.trim() || p.tenant)
    return undefined;
  return p.id;
}

/**
 * v1.0 SubscribeToTask over JSON-RPC, served straight from the engine's subscription: the same
 * events, ids and errors as the SDK's transport over our request handler, without its async
 * generators, call context and request body held for the stream's lifetime. Each event's JSON is
 * made once for all its subscribers, its event id in its metadata too (wire.ts, withEventId).
 */
export function serveSubscribe(
  o: SubscribeOptions,
  res: ServerResponse,
  owner: string,
  requestId: RequestId,
  taskId: string,
  lastEventId: number | undefined,
): void {
  new Subscriber(o, res, requestId).start(owner, taskId, lastEventId);
}

/**
 * One stream, the sink of its engine subscription: each event is one write of its frame. A stream
 * that fails before it opens (an unknown or terminal task) is answered as a plain JSON-RPC error; a
 * resume opens as soon as its task is found (it has nothing to send until the next event).
 */
class Subscriber implements StreamSink {
  readonly #o: SubscribeOptions;
  readonly #res: ServerResponse;
  readonly #requestId: RequestId;
  #sse: SseWriter | undefined;
  #handle: StreamHandle | undefined;

  constructor(o: SubscribeOptions, res: ServerResponse, requestId: RequestId) {
    this.#o = o;
    this.#res = res;
    this.#requestId = requestId;
  }

  start(owner: string, taskId: string, lastEventId: number | undefined): void {
    const requireActive = lastEventId === undefined;
    this.#handle = this.#o.engine.subscribe(owner, taskId, { afterSeq: lastEventId, requireActive }, this);
    this.#o.open.add(this);
  }

  open(): void {
    this.#sse = new SseWriter(this.#res, this.#o.keepAliveMs, { onClose: () => this.close() });
  }

  item(item: StreamItem): undefined | Promise<unknown> {
    if (item.kind === 'task') {
      const task = withEventId({ payload: { $case: 'task', value: toSdkTask(item.view) } }, item.seq);
      return this.#write(JSON.stringify(SdkStreamCodec.toJSON(task)), item.seq, false);
    }
    const { entry } = item;
    const json = eventJson(this.#o.engine, entry, item.contextId);
    // The engine's stream ends after this event: the response ends with it.
    const last = entry.event.kind === 'status' && settled(entry.event.state);
    if (typeof json === 'object' && json !== null) return json.then((j) => this.#write(j, entry.seq, last));
    return this.#write(json, entry.seq, last);
  }

  end(err?: unknown): void {
    this.#o.open.delete(this);
    if (this.#sse === undefined) {
      this.#o.refuse(this.#res, this.#requestId, err);
      return;
    }
    if (err !== undefined) this.#sse.send(this.#o.failure(this.#requestId, err));
    this.#sse.end();
  }

  /** The client left, or the server stops: an unopened stream opens to end at once. */
  close(): void {
    this.#o.open.delete(this);
    this.#handle?.close();
    if (this.#sse === undefined) this.open();
    this.#sse?.end();
  }

  #write(json: string | null, seq: number, last: boolean): undefined | Promise<unknown> {
    const sse = this.#sse as SseWriter;
    if (json === null) return undefined;
    const frame = `{"jsonrpc":"2.0","id":${JSON.stringify(this.#requestId)},"result":${json}}`;
    if (last) sse.endWith(frame, seq);
    else if (!sse.sendText(frame, seq)) this.close();
    // A client that does not read holds its stream here (the store keeps the rest), not in memory.
    else if (this.#res.writableNeedDrain) return untilDrained(this.#res);
    return undefined;
  }
}

/**
 * Every subscriber of a task receives the same log entry objects from the event hub: their JSON is
 * made once, not once per subscriber (a transition watched by thousands of streams); a promise
 * while an artifact chunk stored out of the log is read back. Null: an entry streams do not show.
 */
const rendered = new WeakMap<LoggedEvent, string | null | Promise<string | null>>();
function eventJson(
  engine: Engine,
  entry: LoggedEvent,
  contextId: string,
): string | null | Promise<string | null> {
  let json = rendered.get(entry);
  if (json === undefined) {
    const render = (full: LoggedEvent): string | null => {
      const response = toStreamResponse(full, contextId);
      const text = response ? JSON.stringify(SdkStreamCodec.toJSON(withEventId(response, entry.seq))) : null;
      rendered.set(entry, text);
      return text;
    };
    const full = engine.withContent(entry);
    json = full instanceof Promise ? full.then(render) : render(full);
    if (json instanceof Promise) rendered.set(entry, json);
  }
  return json;
}
