import type { IncomingMessage, ServerResponse } from 'node:http';
import { SendMessageRequest } from '@a2a-js/sdk';
import type { GenerationAsk } from '../generation.js';
import { jsonRpcCall } from './jsonrpc-dispatch.js';
import type { JsonRpcRequest } from './jsonrpc-envelope.js';
import type { JsonRpcOptions } from './jsonrpc-options.js';
import type { StreamStart } from './request-handler.js';
import { type StreamFace, serveOne, serveStream } from './stream-subscriber.js';

/**
 * A v1.0 SendStreamingMessage: the send is our request handler's (startStream, with a call context
 * for that moment only), its task's stream the engine's subscription (stream-subscriber.ts), as
 * gRPC's is. True once it is served; false for another method, or for params the SDK's transport
 * words the refusal of (or serves otherwise: a tenant), which then take its path.
 */
export async function serveSendStream(
  o: JsonRpcOptions,
  face: StreamFace,
  req: IncomingMessage,
  res: ServerResponse,
  request: JsonRpcRequest,
  ask: GenerationAsk | undefined,
): Promise<boolean> {
  if (request.version !== '1.0' || request.method !== 'SendStreamingMessage') return false;
  const params = sendParams(request.params);
  if (params === undefined) return false;
  const { state, context } = jsonRpcCall(req, res, request, o.shutdown, ask);
  let start: StreamStart;
  try {
    start = await o.handler.startStream(params, context);
  } catch (err) {
    // Refused before the stream opened (MAX_STREAMS, a message refused): a plain JSON-RPC error.
    face.refuse(res, request.id, err);
    return true;
  }
  if (start.kind === 'once') serveOne(face, res, start.response, request.id);
  else serveStream(face, res, state.owner, start.taskId, state.lastEventId, request.id, start);
  return true;
}

/**
 * The params decoded as the SDK's transport decodes them, when it would go on to our handler with
 * them: an object without an empty key, no tenant, that its codec reads. Anything else is left to it.
 */
function sendParams(params: unknown): SendMessageRequest | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  if (Object.keys(params).includes('') || (params as { tenant?: unknown }).tenant) return undefined;
  try {
    return SendMessageRequest.fromJSON(params);
  } catch {
    return undefined;
  }
}
