import { z } from 'zod';
import type { EngineError, EngineErrorCode } from '../../engine/errors.js';

/** JSON-RPC 2.0 error codes, and the MCP ones this face answers with. */
export const CODE = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** MCP (2026-07-28): the HTTP headers do not match the body (or are missing). */
  headerMismatch: -32020,
  /** MCP (2026-07-28): the request needs a client capability it did not declare. */
  missingClientCapability: -32021,
  /** MCP (2026-07-28): the request's protocol version is not one this server speaks. */
  unsupportedProtocolVersion: -32022,
} as const;

export type RequestId = string | number;

/** A JSON-RPC message from the client: a request, a notification, or a response to our request. */
export const Incoming = z.union([
  z.object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string().max(200), z.number()]),
    method: z.string().min(1).max(200),
    params: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({
    jsonrpc: z.literal('2.0'),
    method: z.string().min(1).max(200),
    params: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string().max(200), z.number()]),
    result: z.record(z.string(), z.unknown()).optional(),
    error: z.unknown().optional(),
  }),
]);
export type Incoming = z.infer<typeof Incoming>;

/**
 * A request refused with a JSON-RPC error: its code, our words (what to do next), optional data,
 * and the HTTP status it travels with (200 for method errors, 400 where the transport says so).
 */
export class RpcRefusal extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly httpStatus = 200,
  ) {
    super(message);
  }
}

export const invalidParams = (message: string): RpcRefusal => new RpcRefusal(CODE.invalidParams, message);

const notFound = (): RpcRefusal =>
  invalidParams('Failed to retrieve task: Task not found (it never existed, expired, or is not yours)');
const asParams = (err: EngineError): RpcRefusal => invalidParams(err.message);
// A refusal of load or of the server's state, not of the params: the caller may retry as it is.
const asRequest = (err: EngineError): RpcRefusal =>
  new RpcRefusal(CODE.invalidRequest, err.message, { reason: err.code });

/**
 * The JSON-RPC error of each engine error code: a Record over the whole union (like the HTTP faces'
 * STATUS_OF), so that a new engine code fails the typecheck here until it is given its answer.
 */
const REFUSAL_OF: Record<EngineErrorCode, (err: EngineError) => RpcRefusal> = {
  'task-not-found': notFound,
  'too-many-tasks': asRequest,
  'too-many-streams': asRequest,
  'shutting-down': asRequest,
  // A2A 1.1's code for it (the MCP revisions have none): the generations go with it.
  'task-generation-mismatch': (err) =>
    new RpcRefusal(-32010, err.message, { reason: err.code, ...err.details }),
  'task-not-cancelable': asParams,
  'unsupported-operation': asParams,
  'invalid-params': asParams,
  'unknown-skill': asParams,
  forbidden: asParams,
};

/** The JSON-RPC error of an engine refusal: the engine's message (written for callers), a code. */
export const engineRefusal = (err: EngineError): RpcRefusal => REFUSAL_OF[err.code](err);

/** The params of a request, validated: a refusal naming the first wrong field otherwise. */
export function paramsOf<T>(schema: z.ZodType<T>, params: unknown, shape: string): T {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `params.${issue.path.join('.')}` : 'params';
  throw invalidParams(`Send params ${shape}: ${where}: ${issue?.message ?? 'invalid'}`);
}

export const reply = (id: RequestId | null, result: unknown) => ({ jsonrpc: '2.0', id, result });
export const replyError = (id: RequestId | null, code: number, message: string, data?: unknown) => ({
  jsonrpc: '2.0',
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});
