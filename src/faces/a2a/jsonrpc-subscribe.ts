import type { ServerResponse } from 'node:http';
import { StreamResponse as SdkStreamCodec } from '@a2a-js/sdk';
import type { Engine } from '../../engine/engine.js';
import type { LoggedEvent } from '../../engine/events.js';
import { type StreamItem, settled } from '../../engine/streams.js';
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
 * v1.0 SubscribeToTask over JSON-RPC, served straight from the engine's stream: the same events,
 * ids and errors as the SDK's transport over our request handler, without its three async
 * generators, call context and request body held for the stream's lifetime (10,000 subscribers
 * each held ~14 KB that way). Each event's JSON is made once for all its subscribers, its event id in
 * its metadata too (wire.ts, withEventId).
 */
export async function serveSubscribe(
  o: SubscribeOptions,
  res: ServerResponse,
  owner: string,
  requestId: RequestId,
  taskId: string,
  lastEventId: number | undefined,
): Promise<void> {
  const gone = new AbortController();
  const end = () => gone.abort('client gone');
  o.open.add(end);
  const items = o.engine.stream(owner, taskId, {
    afterSeq: lastEventId,
    requireActive: lastEventId === undefined,
    signal: gone.signal,
  });
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(requestId)},"result":`;
  let sse: SseWriter | undefined;
  try {
    try {
      if (lastEventId !== undefined) {
        // A resume yields nothing until the task's next event: say at once that the stream stands.
        await o.engine.record(owner, taskId);
      } else {
        // A stream that fails before its first event is answered as a plain JSON-RPC error.
        sse = await openWithTask(items, res, o.keepAliveMs, end, head);
      }
    } catch (err) {
      o.refuse(res, requestId, err);
      return;
    }
    sse ??= new SseWriter(res, o.keepAliveMs, { onClose: end });
    try {
      for await (const item of items) {
        // A client that does not read holds its stream here (the store keeps the rest), not in memory.
        await untilDrained(res);
        if (item.kind !== 'event') continue;
        const { entry } = item;
        const json = await eventJson(o.engine, entry, item.contextId);
        if (json === undefined) continue;
        // The engine's stream ends after this event: end the response with it.
        if (entry.event.kind === 'status' && settled(entry.event.state))
          sse.endWith(`${head}${json}}`, entry.seq);
        else if (!sse.sendText(`${head}${json}}`, entry.seq)) break;
      }
    } catch (err) {
      sse.send(o.failure(requestId, err));
    }
  } finally {
    o.open.delete(end);
    gone.abort('stream ended');
    await items.return(undefined);
    sse?.end();
  }
}

/**
 * Opens the stream with its first item, the task as it stands. Apart from the stream's loop, so
 * that the loop's frame never holds the task (a stream may stay open for hours).
 */
async function openWithTask(
  items: AsyncGenerator<StreamItem>,
  res: ServerResponse,
  keepAliveMs: number,
  onClose: () => void,
  head: string,
): Promise<SseWriter> {
  const first = await items.next();
  const sse = new SseWriter(res, keepAliveMs, { onClose });
  if (!first.done && first.value.kind === 'task') {
    const task = withEventId(
      { payload: { $case: 'task', value: toSdkTask(first.value.view) } },
      first.value.seq,
    );
    sse.sendText(`${head}${JSON.stringify(SdkStreamCodec.toJSON(task))}}`, first.value.seq);
  }
  return sse;
}

/**
 * Every subscriber of a task receives the same log entry objects from the event hub: their JSON is
 * made once, not once per subscriber (a transition watched by thousands of streams). Null: an
 * entry streams do not show.
 */
const rendered = new WeakMap<LoggedEvent, string | null>();
async function eventJson(engine: Engine, entry: LoggedEvent, contextId: string): Promise<string | undefined> {
  let json = rendered.get(entry);
  if (json === undefined) {
    // Artifact chunks stored out of the log are read back (once per entry).
    const response = toStreamResponse(await engine.withContent(entry), contextId);
    json = response ? JSON.stringify(SdkStreamCodec.toJSON(withEventId(response, entry.seq))) : null;
    rendered.set(entry, json);
  }
  return json ?? undefined;
}

/** The streams a JSON-RPC endpoint has open: each one's `end`, called at shutdown. */
export class OpenSubscriptions {
  readonly #ends = new Set<() => void>();

  readonly #shutdown: AbortSignal;

  constructor(shutdown: AbortSignal) {
    this.#shutdown = shutdown;
    shutdown.addEventListener('abort', () => {
      for (const end of [...this.#ends]) end();
    });
  }

  /** Registers a stream's `end`; a stream that starts during shutdown ends at once. */
  add(end: () => void): void {
    if (this.#shutdown.aborted) end();
    else this.#ends.add(end);
  }

  delete(end: () => void): void {
    this.#ends.delete(end);
  }
}
