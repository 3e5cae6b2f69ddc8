import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SendMessageRequest, StreamResponse } from '@a2a-js/sdk';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { ownerKey } from '../../auth/principal.js';
import type { GenerationAsk } from '../generation.js';
import { SseWriter } from '../http/sse.js';
import { jsonRpcCall } from './jsonrpc-dispatch.js';
import type { JsonRpcRequest } from './jsonrpc-envelope.js';
import type { JsonRpcOptions } from './jsonrpc-options.js';
import { legacyEventJson } from './legacy-subscribe.js';
import type { EngineRequestHandler, StreamStart } from './request-handler.js';
import { type StreamFace, serveStream } from './stream-subscriber.js';

/**
 * v0.3 JSON-RPC message/stream: the send made by our request handler (startStream: the MAX_STREAMS
 * slot first, then the send and its audit), its task's stream served from the engine's
 * subscription (stream-subscriber.ts) in the v0.3 face legacySubscriptionsOf gives, as the SDK's
 * v0.3 transport wrote it: the same events, ids, `final` and SSE error events.
 */
export interface LegacySend {
  handler: EngineRequestHandler;
  face: StreamFace;
  keepAliveMs: number;
  shutdown: AbortSignal;
  /** The SDK's v0.3 transport, asked only to convert the params (see convertedParams). */
  converter: LegacyJsonRpcTransportHandler;
}

export function legacySendOf(o: JsonRpcOptions, face: StreamFace): LegacySend {
  return {
    handler: o.handler,
    face,
    keepAliveMs: o.keepAliveMs,
    shutdown: o.shutdown,
    converter: new LegacyJsonRpcTransportHandler(paramsCatcher(o.handler)),
  };
}

/**
 * Serves a v0.3 message/stream: true once it is; false for another method, or params the SDK's
 * transport refuses (it words the refusal, on the SDK's path).
 */
export async function serveLegacySend(
  send: LegacySend,
  req: IncomingMessage,
  res: ServerResponse,
  request: JsonRpcRequest,
  ask: GenerationAsk | undefined,
): Promise<boolean> {
  if (request.version !== '0.3' || request.method !== 'message/stream') return false;
  const { state, context } = jsonRpcCall(req, res, request, send.shutdown, ask);
  const params = await convertedParams(send.converter, request.body, context);
  if (params === undefined) return false;
  let start: StreamStart;
  try {
    start = await send.handler.startStream(params, context);
  } catch (err) {
    send.face.refuse(res, request.id, err);
    return true;
  }
  if (start.kind === 'once') {
    writeOnce(send, res, request, start.response);
    return true;
  }
  const owner = ownerKey(request.principal);
  serveStream(send.face, res, owner, start.taskId, state.lastEventId, request.id, { slot: start.slot });
  return true;
}

/** A stream of one event without an id (a direct reply, an approver's receipt), then its end. */
function writeOnce(send: LegacySend, res: ServerResponse, request: JsonRpcRequest, event: StreamResponse) {
  new SseWriter(res, send.keepAliveMs).endWith(send.face.frame(legacyEventJson(event, false), request.id));
}

/**
 * The SDK's v0.3 JSON-RPC transport converts message/stream's params to v1.0's (its converter is
 * not exported): it hands them to the handler's sendMessageStream, which here keeps them for the
 * call and streams nothing. Its other checks (the params' shape, the streaming capability) answer
 * with an error instead: undefined then.
 */
async function convertedParams(
  converter: LegacyJsonRpcTransportHandler,
  body: JsonRpcRequest['body'],
  context: ServerCallContext,
): Promise<SendMessageRequest | undefined> {
  await converter.handle(body, context);
  const params = caught.get(context);
  caught.delete(context);
  return params;
}

const caught = new WeakMap<ServerCallContext, SendMessageRequest>();

/** A handler for the converter alone: the agent card (its capabilities), and the params it is given. */
function paramsCatcher(handler: EngineRequestHandler): A2ARequestHandler {
  const catcher: Pick<A2ARequestHandler, 'getAgentCard' | 'sendMessageStream'> = {
    getAgentCard: () => handler.getAgentCard(),
    sendMessageStream: (params, context) => {
      caught.set(context, params);
      return nothing();
    },
  };
  return catcher as A2ARequestHandler;
}

async function* nothing(): AsyncGenerator<StreamResponse> {}
