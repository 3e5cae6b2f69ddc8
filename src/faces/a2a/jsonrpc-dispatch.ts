import type { IncomingMessage, ServerResponse } from 'node:http';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import type { GenerationAsk } from '../generation.js';
import { pollWaitMs } from '../generation.js';
import { SseWriter } from '../http/sse.js';
import { type CallState, finalizeLegacyEvent, newCallContext, newCallState } from './call-state.js';
import { holdOpen } from './hold.js';
import type { JsonRpcRequest } from './jsonrpc-envelope.js';
import type { JsonRpcOptions } from './jsonrpc-options.js';
import { errorMappers } from './jsonrpc-refusals.js';
import { type JsonRpcResponse, ownWords, sendJson } from './jsonrpc-reply.js';
import type { ProtocolVersion } from './version.js';

const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);
/** The methods that may wait for their task (a blocking send). */
const BLOCKING = new Set(['SendMessage', 'message/send']);

type Outcome = JsonRpcResponse | AsyncGenerator<JsonRpcResponse>;
type Dispatch = (
  req: IncomingMessage,
  res: ServerResponse,
  request: JsonRpcRequest,
  ask: GenerationAsk | undefined,
) => Promise<void>;

/**
 * A checked request handed to the SDK's transport of its version, over our request handler: its
 * answer as JSON, or its stream as SSE, each event with the id the call's StreamCursor reads.
 */
export function sdkDispatch(o: JsonRpcOptions): Dispatch {
  const transports: Record<ProtocolVersion, JsonRpcTransportHandler | LegacyJsonRpcTransportHandler> = {
    '1.0': new JsonRpcTransportHandler(o.handler),
    '0.3': new LegacyJsonRpcTransportHandler(o.handler),
  };
  return async (req, res, request, ask) => {
    const { state, context } = jsonRpcCall(req, res, request, o.shutdown, ask);
    state.pollWaitMs = pollWaitMs(req.headers.prefer);
    const stopHold = BLOCKING.has(request.method) ? heldAnswer(state, res, o.keepAliveMs) : undefined;
    const outcome = (await transports[request.version].handle(request.body, context)) as Outcome;
    if (!STREAMING.has(request.method) || !(Symbol.asyncIterator in outcome)) {
      stopHold?.();
      return answer(o, res, request, outcome as JsonRpcResponse);
    }
    return stream(o, res, request, state, outcome);
  };
}

/**
 * A blocking send that waits keeps its answer alive with whitespace before the JSON (hold.ts):
 * what stops the whitespace once the answer comes.
 */
function heldAnswer(state: CallState, res: ServerResponse, keepAliveMs: number): () => void {
  let stopHold: (() => void) | undefined;
  state.hold = () => {
    stopHold ??= holdOpen(res, keepAliveMs, 200, { 'Content-Type': 'application/json' });
  };
  return () => stopHold?.();
}

const extensionsOf = (req: IncomingMessage): string[] =>
  String(req.headers['a2a-extensions'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * A checked request's call state and the SDK's call context over it (its extensions from the
 * A2A-Extensions header), as the SDK's transport and the faces that start a send themselves
 * (jsonrpc-send-stream.ts, legacy-send.ts) hand them to our request handler.
 */
export function jsonRpcCall(
  req: IncomingMessage,
  res: ServerResponse,
  request: JsonRpcRequest,
  shutdown: AbortSignal,
  ask: GenerationAsk | undefined,
): { state: CallState; context: ServerCallContext } {
  const state = newCallState(req, res, {
    principal: request.principal,
    transport: 'jsonrpc',
    version: request.version,
    shutdown,
  });
  state.generation = ask;
  return { state, context: newCallContext(state, extensionsOf(req)) };
}

/** A method's one answer; an InternalError goes with HTTP 500, logged. */
function answer(
  o: JsonRpcOptions,
  res: ServerResponse,
  request: JsonRpcRequest,
  response: JsonRpcResponse,
): void {
  if (response.error) response.error = ownWords(response.error, request.method, o.logger);
  const status = response.error?.code === A2A_ERROR_CODE.INTERNAL_ERROR ? 500 : 200;
  if (status === 500) o.logger.error({ error: response.error, method: request.method }, 'internal error');
  sendJson(res, status, response);
}

/**
 * A streaming method's events as SSE. v1.0: a stream that fails before its first event (an unknown
 * or terminal task, a refused message) is answered as a plain JSON-RPC error, as a client expects
 * of a request that never became a stream; v0.3 clients read every answer to a streaming method as
 * SSE. This is the reader of the call's StreamCursor: each event's id, and whether it closes.
 */
async function stream(
  o: JsonRpcOptions,
  res: ServerResponse,
  request: JsonRpcRequest,
  state: CallState,
  outcome: AsyncGenerator<JsonRpcResponse>,
): Promise<void> {
  const streamError = (err: unknown) => streamFailure(o, request, err);
  const { cursor } = state;
  let events = outcome;
  if (request.version === '1.0') {
    const first = outcome.next();
    try {
      await Promise.race([first, cursor.whenStanding()]);
    } catch (err) {
      return sendJson(res, 200, streamError(err));
    }
    events = resumed(first, outcome);
  }
  const sse = new SseWriter(res, o.keepAliveMs);
  try {
    for await (const event of events) {
      if (request.version === '0.3') finalizeLegacyEvent(event.result, cursor);
      if (!sse.send(event, cursor.seq)) break;
    }
  } catch (err) {
    sse.send(streamError(err));
  } finally {
    sse.end();
  }
}

/** A stream's failure as its error (an SSE event, or v1.0's plain answer before the first event). */
function streamFailure(o: JsonRpcOptions, request: JsonRpcRequest, err: unknown): JsonRpcResponse {
  const error = ownWords(errorMappers[request.version](err), request.method, o.logger);
  if (error.code === A2A_ERROR_CODE.INTERNAL_ERROR)
    o.logger.error({ err, method: request.method }, 'stream failed');
  return { jsonrpc: '2.0', id: request.id, error };
}

/** A stream whose first step was already asked for: that step's event, then the rest. */
async function* resumed<T>(first: Promise<IteratorResult<T>>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  const step = await first;
  if (step.done) return;
  yield step.value;
  yield* rest;
}
