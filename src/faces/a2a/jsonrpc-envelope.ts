import type { IncomingMessage, ServerResponse } from 'node:http';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import type { Principal } from '../../auth/principal.js';
import type { GenerationAsk } from '../generation.js';
import { type BodyLimits, BodyRefused, parseJson, readBody } from '../http/body.js';
import { foreignMessage } from './foreign-body.js';
import { generationAsk } from './generation-params.js';
import type { JsonRpcOptions } from './jsonrpc-options.js';
import { admitCall, type JsonRpcError, type JsonRpcId } from './jsonrpc-refusals.js';
import { failure, type JsonRpcResponse, sendJson } from './jsonrpc-reply.js';
import { paramsProblem } from './params.js';
import { otherVersionMethod, type ProtocolVersion, requestedVersion } from './version.js';

/** A request whose envelope holds: who sent it, in which version, and what it asks. */
export interface JsonRpcRequest {
  principal: Principal;
  version: ProtocolVersion;
  method: string;
  id: JsonRpcId;
  /** Its params, `{}` when it sent none. */
  params: unknown;
  /** The whole request, as the SDK's transport takes it. */
  body: Record<string, unknown>;
}

const SENDING = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);

/**
 * A request admitted, read and parsed, its envelope checked; or undefined once `res` has the
 * refusal (said with the request's id when one can be known).
 */
export async function readRequest(
  req: IncomingMessage,
  res: ServerResponse,
  o: JsonRpcOptions,
): Promise<JsonRpcRequest | undefined> {
  const call = await admitCall(req, requestedVersion(req), o);
  if (!call.ok) {
    // Said with the request's id when the body is small enough to read for it (see idOfRefused).
    const { id, unread } = await idOfRefused(req, o);
    const headers = { ...call.headers, ...(unread ? { Connection: 'close' } : {}) };
    sendJson(res, call.status, { jsonrpc: '2.0', id, error: call.error }, headers);
    return undefined;
  }
  const body = await parsedBody(req, res, o);
  if (body === NOT_READ) return undefined;
  const envelope = checkEnvelope(body);
  if ('error' in envelope) return void sendJson(res, 200, envelope.error);
  // JSON-RPC 2.0 lets a request omit params. The SDK's transports require an object and would
  // answer an unknown method sent without params with -32602 instead of -32601.
  const request = body as { params?: unknown };
  if (request.params === undefined) request.params = {};
  const { principal, version } = call;
  return { principal, version, ...envelope, params: request.params, body: body as Record<string, unknown> };
}

const NOT_READ = Symbol('not read');

/** The body as JSON, or NOT_READ once `res` has the refusal. */
async function parsedBody(req: IncomingMessage, res: ServerResponse, o: BodyLimits): Promise<unknown> {
  try {
    return parseJson(await readBody(req, o.maxBodyBytes), o.maxJsonDepth);
  } catch (err) {
    if (!(err instanceof BodyRefused)) throw err;
    const { kind, message } = err.problem;
    if (kind === 'not-json')
      sendJson(res, 200, failure(null, A2A_ERROR_CODE.PARSE_ERROR, `Parse error: ${message}`));
    else if (kind === 'too-deep') sendJson(res, 200, failure(null, A2A_ERROR_CODE.INVALID_REQUEST, message));
    // The body was not read (too large, compressed, or its caller left): an HTTP status says so.
    else
      sendJson(res, err.status, failure(null, A2A_ERROR_CODE.INVALID_REQUEST, message), {
        Connection: 'close',
      });
    return NOT_READ;
  }
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
 * The request's params checked (requestProblem), and the generation fields it carries; or
 * undefined once `res` has the refusal.
 */
export function checkedParams(
  res: ServerResponse,
  { version, method, id, params }: JsonRpcRequest,
): { ask: GenerationAsk | undefined } | undefined {
  const problem = requestProblem(version, method, params);
  if (problem) return void sendJson(res, 200, { jsonrpc: '2.0', id, error: problem });
  const generation = generationAsk(method, params);
  if (!('problem' in generation)) return generation;
  const error = { code: A2A_ERROR_CODE.INVALID_PARAMS, message: `Invalid params: ${generation.problem}` };
  sendJson(res, 200, { jsonrpc: '2.0', id, error });
  return undefined;
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

/**
 * How much of a refused request's body is read to answer with its id (never more than
 * MAX_BODY_BYTES). A refused caller may be anyone: it gets a read the size of a request without
 * large parts, no more. Past it the answer's id is null and the connection is closed, not drained.
 */
const REFUSED_BODY_BYTES = 16 * 1024;

/** The id of a request refused before its body was read; `unread`: the body was left unread. */
export async function idOfRefused(
  req: IncomingMessage,
  limits: BodyLimits,
): Promise<{ id: JsonRpcId; unread: boolean }> {
  let body: unknown;
  try {
    body = parseJson(
      await readBody(req, Math.min(REFUSED_BODY_BYTES, limits.maxBodyBytes)),
      limits.maxJsonDepth,
    );
  } catch (err) {
    if (!(err instanceof BodyRefused)) throw err;
    const unread = err.problem.kind === 'too-large' || err.problem.kind === 'encoding';
    return { id: null, unread };
  }
  const id = (body as { id?: unknown } | null)?.id;
  const valid = typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
  return { id: valid ? (id as JsonRpcId) : null, unread: false };
}
