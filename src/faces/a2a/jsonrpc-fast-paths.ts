import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { ownerKey } from '../../auth/principal.js';
import { openUntil } from '../http/open-subscriptions.js';
import { parseLastEventId } from './call-state.js';
import { INTERNAL_MESSAGE, toProtocolError } from './errors.js';
import type { JsonRpcRequest } from './jsonrpc-envelope.js';
import type { JsonRpcOptions } from './jsonrpc-options.js';
import { errorMappers, type JsonRpcError, type JsonRpcId } from './jsonrpc-refusals.js';
import { type JsonRpcResponse, ownWords, sendJson, sendText } from './jsonrpc-reply.js';
import { type StreamFace, serveStream } from './stream-subscriber.js';

/**
 * The two hot paths the SDK's transport is not asked to serve: polls (a v1.0 GetTask, from
 * {@link TaskCache}) and v1.0 SubscribeToTask (stream-subscriber.ts). Each answers what it can and
 * leaves anything else to the SDK's path, which words its errors.
 */

/**
 * The hot path of polling agents: a well-formed v1.0 GetTask answered from the task cache, with
 * exactly the JSON the SDK's transport would write. True once answered; an unknown task (or any
 * failure) is false and takes the SDK's path, which gives its usual errors. Its params are checked
 * here, as strictly as the envelope's checks would (see plainGetTask).
 */
export async function servePoll(
  o: JsonRpcOptions,
  res: ServerResponse,
  request: JsonRpcRequest,
): Promise<boolean> {
  if (request.version !== '1.0' || request.method !== 'GetTask') return false;
  const poll = plainGetTask(request.params);
  if (!poll) return false;
  let json: string | undefined;
  try {
    json = await o.tasks.json(ownerKey(request.principal), poll.id, poll.historyLength);
  } catch {
    return false;
  }
  if (json === undefined) return false;
  sendText(res, 200, `{"jsonrpc":"2.0","id":${JSON.stringify(request.id)},"result":${json}}`);
  return true;
}

/** A v1.0 GetTask the fast path serves: its task id and history length, nothing else to check. */
interface PlainGetTask {
  id: string;
  historyLength: number | undefined;
}

/**
 * The params of a v1.0 GetTask when they are plainly valid: a non-empty string id, no tenant, a
 * history length (under its JSON or its proto name) absent or a non-negative integer. Anything
 * else, valid or not, is left to the full path (paramsProblem, then the SDK), which words its errors.
 */
function plainGetTask(params: unknown): PlainGetTask | undefined {
  const p = params as {
    id?: unknown;
    historyLength?: unknown;
    history_length?: unknown;
    tenant?: unknown;
    currentGeneration?: unknown;
    current_generation?: unknown;
  };
  if (typeof p !== 'object' || p === null || Array.isArray(p)) return undefined;
  // A long poll (generation-params.ts) waits first: the full path.
  if (p.currentGeneration != null || p.current_generation != null) return undefined;
  if (typeof p.id !== 'string' || !p.id.trim()) return undefined;
  if (!(p.tenant === undefined || p.tenant === null || p.tenant === '')) return undefined;
  const a = p.historyLength;
  const b = p.history_length;
  if (!lengthOk(a) || !lengthOk(b)) return undefined;
  // Protobuf JSON names a field by its JSON name or its proto name, as the SDK's decoder reads it.
  return { id: p.id, historyLength: (a ?? b ?? undefined) as number | undefined };
}

const lengthOk = (h: unknown): boolean =>
  h === undefined || h === null || (Number.isInteger(h) && (h as number) >= 0);

/**
 * What a v1.0 stream (SubscribeToTask, SendStreamingMessage: `method`) is served with: its events in
 * JSON-RPC responses, its failures in our words, as the SDK's path says them.
 */
export function subscriptionsOf(o: JsonRpcOptions, method = 'SubscribeToTask'): StreamFace {
  // An engine failure in our words, as the request handler's streams say it (errors are logged there).
  const subscribeError = (err: unknown): JsonRpcError => {
    const cause = toProtocolError(err, 'jsonrpc', (e) => {
      // The request handler logged its own internal failures already (and worded them so).
      if (!(e instanceof Error && e.message === INTERNAL_MESSAGE))
        o.logger.error({ err: e }, 'internal error');
    });
    const error = ownWords(errorMappers['1.0'](cause), method, o.logger);
    if (error.code === A2A_ERROR_CODE.INTERNAL_ERROR) o.logger.error({ err, method }, 'stream failed');
    return error;
  };
  const failure = (id: JsonRpcId, err: unknown): JsonRpcResponse => ({
    jsonrpc: '2.0',
    id,
    error: subscribeError(err),
  });
  return {
    engine: o.engine,
    keepAliveMs: o.keepAliveMs,
    open: openUntil(o.shutdown),
    frame: (json, id) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${json}}`,
    refuse: (res, id, err) => sendJson(res, 200, failure(id, err)),
    failure: (id, err) => ({ json: JSON.stringify(failure(id, err)) }),
  };
}

/**
 * A v1.0 SubscribeToTask served from the engine's subscription: true once it is (the stream then
 * lives on its own, holding none of this request's state: its body, say), false for another
 * method, or params the SDK's path words the error of.
 */
export function serveSubscription(
  subscriptions: StreamFace,
  req: IncomingMessage,
  res: ServerResponse,
  request: JsonRpcRequest,
): boolean {
  if (request.version !== '1.0' || request.method !== 'SubscribeToTask') return false;
  const taskId = subscribeTarget(request.params);
  if (taskId === undefined) return false;
  const lastEventId = parseLastEventId(req.headers['last-event-id']);
  serveStream(subscriptions, res, ownerKey(request.principal), taskId, lastEventId, request.id);
  return true;
}

/** The task id of a v1.0 SubscribeToTask this path serves: a plain id, no tenant (else the SDK's path). */
function subscribeTarget(params: unknown): string | undefined {
  const p = params as { id?: unknown; tenant?: unknown };
  if (typeof p !== 'object' || p === null || typeof p.id !== 'string' || !p.id.trim() || p.tenant)
    return undefined;
  return p.id;
}
