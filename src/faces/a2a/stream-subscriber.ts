import type { ServerResponse } from 'node:http';
import { StreamResponse as SdkStreamCodec, type StreamResponse } from '@a2a-js/sdk';
import type { Engine } from '../../engine/engine.js';
import type { LoggedEvent } from '../../engine/events.js';
import { type StreamItem, settled } from '../../engine/streams.js';
import type { StreamHandle, StreamSink } from '../../engine/subscription.js';
import type { OpenSubscriptions } from '../http/open-subscriptions.js';
import { SseWriter, untilDrained } from '../http/sse.js';
import { toSdkTask, toStreamResponse, withEventId } from './wire.js';

/** A JSON-RPC request's id (a REST stream has none: null). */
export type RequestId = string | number | null;

/**
 * How one face writes a v1.0 task stream (JSON-RPC SubscribeToTask and SendStreamingMessage, REST
 * `GET /tasks/{id}:subscribe` and `POST /message:stream`):
 * one object per face, shared by all its streams. The events' JSON is the same on every face (made
 * once per event, see eventJson); the face puts it in its envelope and words its errors.
 */
export interface StreamFace {
  engine: Engine;
  keepAliveMs: number;
  /** Streams that are open now, ended at shutdown. */
  open: OpenSubscriptions;
  /** An event's SSE data around its StreamResponse JSON: JSON-RPC's response envelope, REST's none. */
  frame(json: string, requestId: RequestId): string;
  /** Answers a stream that failed before it started: the face's plain error answer. */
  refuse(res: ServerResponse, requestId: RequestId, err: unknown): void;
  /** A failure once the stream has started: its error event's data (JSON) and SSE event type. */
  failure(requestId: RequestId, err: unknown): { json: string; event?: string };
  /**
   * A face of another protocol version than v1.0 (v0.3's tasks/resubscribe): each item's event
   * JSON in that version's wire, made by the face (null: an entry streams do not show).
   */
  render?(item: StreamItem): string | null | Promise<string | null>;
}

/** What a streaming send's stream (request-handler.ts, startStream) has that a subscription has not. */
export interface SendStream {
  /** The MAX_STREAMS slot the send took before it made the task: the stream gives it back, once. */
  slot: () => void;
}

/**
 * A task's stream served straight from the engine's subscription, not through the SDK's transports
 * over our request handler: the same events, ids and errors, without async generators, a call
 * context and the request's state held for the stream's lifetime. With `lastEventId`, a resume:
 * what followed that event, no snapshot, and a task already ended is no refusal. A send's stream
 * (`send`) refuses no task for having ended: one that completed at once streams its snapshot, then ends.
 */
export function serveStream(
  face: StreamFace,
  res: ServerResponse,
  owner: string,
  taskId: string,
  lastEventId: number | undefined,
  requestId: RequestId = null,
  send?: SendStream,
): void {
  new Subscriber(face, res, requestId).start(owner, taskId, lastEventId, send);
}

/**
 * A stream of one event without an id, then its end: a send's direct reply, or an approver's
 * receipt. The event is v1.0's StreamResponse (a face with its own `render` is not served here).
 */
export function serveOne(
  face: StreamFace,
  res: ServerResponse,
  response: StreamResponse,
  requestId: RequestId = null,
): void {
  const json = JSON.stringify(SdkStreamCodec.toJSON(response));
  new SseWriter(res, face.keepAliveMs).endWith(face.frame(json, requestId));
}

/**
 * One stream, the sink of its engine subscription: each event is one write of its frame. A stream
 * that fails before it opens (an unknown or terminal task, MAX_STREAMS) is answered as the face's
 * plain error; a resume opens as soon as its task is found (it has nothing to send until the next
 * event).
 */
class Subscriber implements StreamSink {
  readonly #face: StreamFace;
  readonly #res: ServerResponse;
  readonly #requestId: RequestId;
  #sse: SseWriter | undefined;
  #handle: StreamHandle | undefined;

  constructor(face: StreamFace, res: ServerResponse, requestId: RequestId) {
    this.#face = face;
    this.#res = res;
    this.#requestId = requestId;
  }

  start(owner: string, taskId: string, lastEventId: number | undefined, send: SendStream | undefined): void {
    const requireActive = lastEventId === undefined && send === undefined;
    const o = { afterSeq: lastEventId, requireActive, slot: send?.slot };
    this.#handle = this.#face.engine.subscribe(owner, taskId, o, this);
    this.#face.open.add(this);
  }

  open(): void {
    this.#sse = new SseWriter(this.#res, this.#face.keepAliveMs, { onClose: () => this.close() });
  }

  item(item: StreamItem): undefined | Promise<unknown> {
    if (this.#face.render !== undefined) return this.#rendered(this.#face.render(item), item);
    if (item.kind === 'task') {
      const task = withEventId({ payload: { $case: 'task', value: toSdkTask(item.view) } }, item.seq);
      return this.#write(JSON.stringify(SdkStreamCodec.toJSON(task)), item.seq, false);
    }
    const { entry } = item;
    const json = eventJson(this.#face.engine, entry, item.contextId);
    // The engine's stream ends after this event: the response ends with it.
    const last = entry.event.kind === 'status' && settled(entry.event.state);
    if (typeof json === 'object' && json !== null) return json.then((j) => this.#write(j, entry.seq, last));
    return this.#write(json, entry.seq, last);
  }

  end(err?: unknown): void {
    this.#face.open.delete(this);
    if (this.#sse === undefined) {
      this.#face.refuse(this.#res, this.#requestId, err);
      return;
    }
    if (err !== undefined) {
      const failure = this.#face.failure(this.#requestId, err);
      this.#sse.sendText(failure.json, undefined, failure.event);
    }
    this.#sse.end();
  }

  /** The client left, or the server stops: an unopened stream opens to end at once. */
  close(): void {
    this.#face.open.delete(this);
    this.#handle?.close();
    if (this.#sse === undefined) this.open();
    this.#sse?.end();
  }

  /** A face's own rendering of the item, written as item() writes v1.0's. */
  #rendered(json: string | null | Promise<string | null>, item: StreamItem): undefined | Promise<unknown> {
    const seq = item.kind === 'task' ? item.seq : item.entry.seq;
    const last =
      item.kind === 'event' && item.entry.event.kind === 'status' && settled(item.entry.event.state);
    if (json instanceof Promise) return json.then((j) => this.#write(j, seq, last));
    return this.#write(json, seq, last);
  }

  #write(json: string | null, seq: number, last: boolean): undefined | Promise<unknown> {
    const sse = this.#sse as SseWriter;
    if (json === null) return undefined;
    const frame = this.#face.frame(json, this.#requestId);
    if (last) sse.endWith(frame, seq);
    else if (!sse.sendText(frame, seq)) this.close();
    // A client that does not read holds its stream here (the store keeps the rest), not in memory.
    else if (this.#res.writableNeedDrain) return untilDrained(this.#res);
    return undefined;
  }
}

/**
 * Every subscriber of a task receives the same log entry objects from the event hub: their JSON is
 * made once, not once per subscriber (a transition watched by thousands of streams), whatever face
 * each subscriber is on; a promise while an artifact chunk stored out of the log is read back.
 * Each event carries its id in its metadata too (wire.ts, withEventId). Null: an entry streams do
 * not show.
 */
const rendered: RenderedEntries = new WeakMap();
const v1Json = (response: StreamResponse): string => JSON.stringify(SdkStreamCodec.toJSON(response));
const eventJson = (engine: Engine, entry: LoggedEvent, contextId: string) =>
  entryJson(rendered, engine, entry, contextId, v1Json);

/** Each entry's JSON in one wire, made once: the cache of {@link entryJson}. */
export type RenderedEntries = WeakMap<LoggedEvent, string | null | Promise<string | null>>;

/**
 * A log entry's event JSON in the wire `encode` writes (`closing`: the entry ends the stream), from
 * `cache` when it was made already; made once for all its streams (see {@link eventJson}).
 */
export function entryJson(
  cache: RenderedEntries,
  engine: Engine,
  entry: LoggedEvent,
  contextId: string,
  encode: (response: StreamResponse, closing: boolean) => string,
): string | null | Promise<string | null> {
  let json = cache.get(entry);
  if (json === undefined) {
    const render = (full: LoggedEvent): string | null => {
      const response = toStreamResponse(full, contextId);
      const closing = entry.event.kind === 'status' && settled(entry.event.state);
      const text = response ? encode(withEventId(response, entry.seq), closing) : null;
      cache.set(entry, text);
      return text;
    };
    const full = engine.withContent(entry);
    json = full instanceof Promise ? full.then(render) : render(full);
    if (json instanceof Promise) cache.set(entry, json);
  }
  return json;
}
