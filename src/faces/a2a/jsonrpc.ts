import type { IncomingMessage, ServerResponse } from 'node:http';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import { type A2ARequestHandler, JsonRpcTransportHandler } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import { ownerKey, type Principal } from '../../auth/principal.js';
import type { Engine } from '../../engine/engine.js';
import { pollWaitMs } from '../generation.js';
import type { FaceOptions } from '../http/admission.js';
import { BodyRefused, parseJson, readBody } from '../http/body.js';
import { SseWriter } from '../http/sse.js';
import { finalizeLegacyEvent, newCallContext, newCallState, parseLastEventId } from './call-state.js';
import { INTERNAL_MESSAGE, toProtocolError } from './errors.js';
import { foreignMessage } from './foreign-body.js';
import { generationAsk } from './generation-params.js';
import { holdOpen } from './hold.js';
import {
  admitCall,
  errorMappers,
  idOfRefused,
  type JsonRpcError,
  type JsonRpcId,
} from './jsonrpc-refusals.js';
import { OpenSubscriptions, serveSubscribe, subscribeTarget } from './jsonrpc-subscribe.js';
import { paramsProblem } from './params.js';
import type { TaskCache } from './task-cache.js';
import { otherVersionMethod, type ProtocolVersion, requestedVersion } from './version.js';

export interface JsonRpcOptions extends FaceOptions {
  handler: A2ARequestHandler;
  /** Serves v1.0 SubscribeToTask directly (see jsonrpc-subscribe.ts). */
  engine: Engine;
  /** v1.0 GetTask results, as JSON text for the poll fast path. */
  tasks: TaskCache;
  logger: Logger;
}

interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: JsonRpcError;
}

const SENDING = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);
const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);
/** The methods that may wait for their task (a blocking send). */
const BLOCKING = new Set(['SendMessage', 'message/send']);

/**
 * JSON-RPC 2.0 over HTTP POST, both protocol versions, on plain node:http (no framework on this hot
 * path). `A2A-Version: 1.0` selects v1.0; no header (or `0.3`) selects v0.3, as the spec says.
 * Errors are JSON-RPC error objects with HTTP 200. A v1.0 streaming method answers with SSE once it
 * has a first event (or, resuming, once its task is found); a refusal before that is plain JSON-RPC.
 * v0.3 answers every error of a streaming method as an SSE error event.
 */
export function jsonRpcEndpoint(
  o: JsonRpcOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const transports: Record<ProtocolVersion, JsonRpcTransportHandler | LegacyJsonRpcTransportHandler> = {
    '1.0': new JsonRpcTransportHandler(o.handler),
    '0.3': new LegacyJsonRpcTransportHandler(o.handler),
  };
  // An engine failure in our words, as the request handler's streams say it (errors are logged there).
  const subscribeError = (err: unknown): JsonRpcError => {
    const cause = toProtocolError(err, 'jsonrpc', (e) => o.logger.error({ err: e }, 'internal error'));
    const error = ownWords(errorMappers['1.0'](cause), 'SubscribeToTask', o.logger);
    if (error.code === A2A_ERROR_CODE.INTERNAL_ERROR)
      o.logger.error({ err, method: 'SubscribeToTask' }, 'stream failed');
    return error;
  };
  const subscribeFailure = (id: JsonRpcId, err: unknown): JsonRpcResponse => ({
    jsonrpc: '2.0',
    id,
    error: subscribeError(err),
  });
  const subscriptions = {
    engine: o.engine,
    keepAliveMs: o.keepAliveMs,
    open: new OpenSubscriptions(o.shutdown),
    refuse: (res: ServerResponse, id: JsonRpcId, err: unknown) =>
      sendJson(res, 200, subscribeFailure(id, err)),
    failure: subscribeFailure,
  };

  return async (req, res) => {
    const version = requestedVersion(req);
    const call = await admitCall(req, version, o);
    if (!call.ok) {
      // Said with the request's id when the body is small enough to read for it (see idOfRefused).
      const { id, unread } = await idOfRefused(req, o);
      const headers = { ...call.headers, ...(unread ? { Connection: 'close' } : {}) };
      return sendJson(res, call.status, { jsonrpc: '2.0', id, error: call.error }, headers);
    }
    const { principal } = call;
    let body: unknown;
    try {
      body = parseJson(await readBody(req, o.maxBodyBytes), o.maxJsonDepth);
    } catch (err) {
      if (!(err instanceof BodyRefused)) throw err;
      const { kind, message } = err.problem;
      if (kind === 'not-json')
        return sendJson(res, 200, failure(null, A2A_ERROR_CODE.PARSE_ERROR, `Parse error: ${message}`));
      if (kind === 'too-deep')
        return sendJson(res, 200, failure(null, A2A_ERROR_CODE.INVALID_REQUEST, message));
      // The body was not read (too large, compressed, or its caller left): an HTTP status says so.
      return sendJson(res, err.status, failure(null, A2A_ERROR_CODE.INVALID_REQUEST, message), {
        Connection: 'close',
      });
    }
    const envelope = checkEnvelope(body);
    if ('error' in envelope) return sendJson(res, 200, envelope.error);
    // JSON-RPC 2.0 lets a request omit params. The SDK's transports require an object and would
    // answer an unknown method sent without params with -32602 instead of -32601.
    const request = body as { params?: unknown };
    if (request.params === undefined) request.params = {};
    // The poll's params are checked here, as strictly as requestProblem would (see plainGetTask).
    const poll =
      call.version === '1.0' && envelope.method === 'GetTask' ? plainGetTask(request.params) : undefined;
    if (poll) {
      const json = await pollFastPath(o, principal, poll);
      if (json !== undefined)
        return sendText(res, 200, `{"jsonrpc":"2.0","id":${JSON.stringify(envelope.id)},"result":${json}}`);
    }
    const problem = requestProblem(call.version, envelope.method, request.params);
    if (problem) return sendJson(res, 200, { jsonrpc: '2.0', id: envelope.id, error: problem });
    const generation = generationAsk(envelope.method, request.params);
    if ('problem' in generation) {
      const error = { code: A2A_ERROR_CODE.INVALID_PARAMS, message: `Invalid params: ${generation.problem}` };
      return sendJson(res, 200, { jsonrpc: '2.0', id: envelope.id, error });
    }

    if (call.version === '1.0' && envelope.method === 'SubscribeToTask') {
      const taskId = subscribeTarget(request.params);
      // Returned, not awaited: the stream holds none of this request's state (its body, say).
      if (taskId !== undefined) {
        const lastEventId = parseLastEventId(req.headers['last-event-id']);
        return serveSubscribe(subscriptions, res, ownerKey(principal), envelope.id, taskId, lastEventId);
      }
    }

    const state = newCallState(req, res, {
      principal,
      transport: 'jsonrpc',
      version: call.version,
      shutdown: o.shutdown,
    });
    state.generation = generation.ask;
    state.pollWaitMs = pollWaitMs(req.headers.prefer);
    // A blocking send that waits keeps its answer alive with whitespace before the JSON (hold.ts).
    let stopHold: (() => void) | undefined;
    if (BLOCKING.has(envelope.method))
      state.hold = () => {
        stopHold ??= holdOpen(res, o.keepAliveMs, 200, { 'Content-Type': 'application/json' });
      };
    const extensions = String(req.headers['a2a-extensions'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const context = newCallContext(state, extensions);
    const outcome = (await transports[call.version].handle(body as Record<string, unknown>, context)) as
      | JsonRpcResponse
      | AsyncGenerator<JsonRpcResponse>;

    if (!STREAMING.has(envelope.method) || !(Symbol.asyncIterator in outcome)) {
      stopHold?.();
      const response = outcome as JsonRpcResponse;
      if (response.error) response.error = ownWords(response.error, envelope.method, o.logger);
      const status = response.error?.code === A2A_ERROR_CODE.INTERNAL_ERROR ? 500 : 200;
      if (status === 500)
        o.logger.error({ error: response.error, method: envelope.method }, 'internal error');
      return sendJson(res, status, response);
    }
    const streamError = (err: unknown): JsonRpcResponse => {
      const error = ownWords(errorMappers[call.version](err), envelope.method, o.logger);
      if (error.code === A2A_ERROR_CODE.INTERNAL_ERROR)
        o.logger.error({ err, method: envelope.method }, 'stream failed');
      return { jsonrpc: '2.0', id: envelope.id, error };
    };
    // v1.0: a stream that fails before its first event (an unknown or terminal task, a refused
    // message) is answered as a plain JSON-RPC error, as a client expects of a request that never
    // became a stream; v0.3 clients read every answer to a streaming method as SSE.
    let events = outcome;
    if (call.version === '1.0') {
      const first = outcome.next();
      const opened = new Promise<void>((resolve) => {
        state.cursor.opened = resolve;
      });
      try {
        await Promise.race([first, opened]);
      } catch (err) {
        return sendJson(res, 200, streamError(err));
      }
      events = resumed(first, outcome);
    }
    const sse = new SseWriter(res, o.keepAliveMs);
    try {
      for await (const event of events) {
        if (call.version === '0.3') finalizeLegacyEvent(event.result, state.cursor);
        if (!sse.send(event, state.cursor.seq)) break;
      }
    } catch (err) {
      sse.send(streamError(err));
    } finally {
      sse.end();
    }
  };
}

/** A stream whose first step was already asked for: that step's event, then the rest. */
async function* resumed<T>(first: Promise<IteratorResult<T>>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  const step = await first;
  if (step.done) return;
  yield step.value;
  yield* rest;
}

/**
 * Why a well-formed request cannot be served as it is, in words that say what to do: a method of
 * the other protocol version (-32601), a message in another version's shape or params of the wrong
 * types (-32602).
 */
function requestProblem(version: ProtocolVersion, method: string, params: unknown): JsonRpcError | undefined {
  const elsewhere = otherVersionMethod(version, method);
  if (elsewhere) return { code: A2A_ERROR_CODE.METHOD_NOT_FOUND, message: `Method not found: ${elsewhere}` };
  const bad =
    (SENDING.has(method) ? foreignMessage({ transport: 'jsonrpc', version }, params) : undefined) ??
    paramsProblem(version, method, params);
  return bad ? { code: A2A_ERROR_CODE.INVALID_PARAMS, message: `Invalid params: ${bad}` } : undefined;
}

function checkEnvelope(body: unknown): { method: string; id: JsonRpcId } | { error: JsonRpcResponse } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    const what = Array.isArray(body)
      ? 'Batch requests are not supported'
      : 'The request must be a JSON object';
    return { error: failure(null, A2A_ERROR_CODE.INVALID_REQUEST, `Invalid request: ${what}`) };
  }
  const r = body as { jsonrpc?: unknown; method?: unknown; id?: unknown };
  const idOk = r.id === undefined || r.id === null || typeof r.id === 'string' || Number.isInteger(r.id);
  const id = idOk ? ((r.id ?? null) as JsonRpcId) : null;
  if (!idOk)
    return {
      error: failure(
        null,
        A2A_ERROR_CODE.INVALID_REQUEST,
        'Invalid request: id must be a string, integer or null',
      ),
    };
  if (r.jsonrpc !== '2.0')
    return { error: failure(id, A2A_ERROR_CODE.INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"') };
  if (typeof r.method !== 'string' || r.method === '') {
    return { error: failure(id, A2A_ERROR_CODE.INVALID_REQUEST, 'Invalid request: method is required') };
  }
  return { method: r.method, id };
}

/**
 * An error the SDK's transport raised from a JS failure while decoding a request (InternalError
 * carrying the JS message, e.g. "Cannot read properties of null"): the request's params were not
 * what the method takes. Said in our words as InvalidParams; the original goes to the log. Our
 * own internal failures already carry {@link INTERNAL_MESSAGE} and stay InternalError.
 */
function ownWords(error: JsonRpcError, method: string, logger: Logger): JsonRpcError {
  if (error.code !== A2A_ERROR_CODE.INTERNAL_ERROR || error.message === INTERNAL_MESSAGE) return error;
  logger.warn({ method, cause: error.message }, 'JSON-RPC params the SDK could not decode');
  return {
    code: A2A_ERROR_CODE.INVALID_PARAMS,
    message: `Invalid params: they do not have the shape ${method} takes`,
  };
}

const failure = (id: JsonRpcId, code: number, message: string): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

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
 * The hot path of polling agents: a well-formed v1.0 GetTask answered from {@link TaskCache},
 * with exactly the JSON the SDK's transport would write. An unknown task (or any failure) returns
 * undefined and takes the SDK's path, which gives its usual errors.
 */
async function pollFastPath(
  o: JsonRpcOptions,
  principal: Principal,
  poll: PlainGetTask,
): Promise<string | undefined> {
  try {
    return await o.tasks.json(ownerKey(principal), poll.id, poll.historyLength);
  } catch {
    return undefined;
  }
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendText(res, status, JSON.stringify(body), headers);
}

/**
 * A JSON answer already serialized (the poll fast path splices cached JSON into its envelope). A
 * held answer (hold.ts) has its status and headers written already: its JSON follows the spaces
 * (an InternalError then goes with the 200 it has, as every other JSON-RPC error does).
 */
function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end(text);
    return;
  }
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
