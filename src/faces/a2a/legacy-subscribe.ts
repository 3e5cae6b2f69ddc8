import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamResponse } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { ownerKey } from '../../auth/principal.js';
import type { Engine } from '../../engine/engine.js';
import type { StreamItem } from '../../engine/streams.js';
import { openUntil } from '../http/open-subscriptions.js';
import { SseWriter } from '../http/sse.js';
import { parseLastEventId } from './call-state.js';
import { toProtocolError } from './errors.js';
import type { JsonRpcRequest } from './jsonrpc-envelope.js';
import type { JsonRpcOptions } from './jsonrpc-options.js';
import { errorMappers, type JsonRpcId } from './jsonrpc-refusals.js';
import { type JsonRpcResponse, ownWords } from './jsonrpc-reply.js';
import { entryJson, type RenderedEntries, type StreamFace, serveStream } from './stream-subscriber.js';
import { toSdkTask, withEventId } from './wire.js';

const METHOD = 'tasks/resubscribe';

/**
 * What v0.3 tasks/resubscribe (and message/stream, legacy-send.ts: `method`) is served with, as the
 * SDK's v0.3 transport answers it: each event in v0.3's wire inside `{"id", "jsonrpc", "result"}`,
 * the closing status event `final`; every failure, before the stream opened or after, an SSE event
 * of its JSON-RPC error in v0.3's codes (v0.3 clients read every answer to a streaming method as SSE).
 */
export function legacySubscriptionsOf(o: JsonRpcOptions, method = METHOD): StreamFace {
  const failure = (id: JsonRpcId, err: unknown): JsonRpcResponse => {
    const cause = toProtocolError(err, 'jsonrpc', (e) => o.logger.error({ err: e }, 'internal error'));
    const error = ownWords(errorMappers['0.3'](cause), method, o.logger);
    if (error.code === A2A_ERROR_CODE.INTERNAL_ERROR) o.logger.error({ err, method }, 'stream failed');
    return { jsonrpc: '2.0', id, error };
  };
  return {
    engine: o.engine,
    keepAliveMs: o.keepAliveMs,
    open: openUntil(o.shutdown),
    frame: (json, id) => `{"id":${JSON.stringify(id)},"jsonrpc":"2.0","result":${json}}`,
    refuse: (res, id, err) => {
      const sse = new SseWriter(res, o.keepAliveMs);
      sse.send(failure(id, err));
      sse.end();
    },
    failure: (id, err) => ({ json: JSON.stringify(failure(id, err)) }),
    render: legacyRender(o.engine, legacyEventJson),
  };
}

/**
 * A v0.3 tasks/resubscribe served from the engine's subscription (stream-subscriber.ts): true once
 * it is, false for another method or params the SDK's path words the error of.
 */
export function serveLegacySubscription(
  subscriptions: StreamFace,
  req: IncomingMessage,
  res: ServerResponse,
  request: JsonRpcRequest,
): boolean {
  if (request.version !== '0.3' || request.method !== METHOD) return false;
  const p = request.params as { id?: unknown } | null;
  if (typeof p !== 'object' || p === null || typeof p.id !== 'string' || !p.id.trim()) return false;
  const lastEventId = parseLastEventId(req.headers['last-event-id']);
  serveStream(subscriptions, res, ownerKey(request.principal), p.id, lastEventId, request.id);
  return true;
}

/** The SDK's v0.3 conversion of a stream event (its stream's own is not exported; this one is the same). */
const toV03 = new V03PushNotificationSerializer();

/** A v0.3 event's JSON, `final` when it closes the stream (the SDK marks only terminal states). */
export function legacyEventJson(response: StreamResponse, closing: boolean): string {
  const { body } = toV03.serialize(response);
  if (!closing) return body;
  const event = JSON.parse(body) as { final?: boolean };
  event.final = true;
  return JSON.stringify(event);
}

/** How a v0.3 wire writes one event: its JSON, `final` when `closing` (see legacyEventJson). */
type LegacyEncoding = (response: StreamResponse, closing: boolean) => string;

/**
 * A v0.3 face's render (stream-subscriber.ts): the stream's items in `encode`'s wire. As
 * stream-subscriber.ts's eventJson, each log entry's JSON is made once for all its streams.
 */
export function legacyRender(
  engine: Engine,
  encode: LegacyEncoding,
): (item: StreamItem) => string | null | Promise<string | null> {
  const rendered: RenderedEntries = new WeakMap();
  return (item) => {
    if (item.kind === 'task') {
      return encode(
        withEventId({ payload: { $case: 'task', value: toSdkTask(item.view) } }, item.seq),
        false,
      );
    }
    return entryJson(rendered, engine, item.entry, item.contextId, encode);
  };
}
