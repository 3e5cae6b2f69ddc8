import type { ServerResponse } from 'node:http';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import type { Logger } from 'pino';
import { INTERNAL_MESSAGE } from './errors.js';
import type { JsonRpcError, JsonRpcId } from './jsonrpc-refusals.js';

/** A JSON-RPC answer: its result or its error. */
export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: JsonRpcId;
  result?: unknown;
  error?: JsonRpcError;
}

export const failure = (id: JsonRpcId, code: number, message: string): JsonRpcResponse => ({
  jsonrpc: '2.0',
  id,
  error: { code, message },
});

/**
 * An error the SDK's transport raised from a JS failure while decoding a request (InternalError
 * carrying the JS message, e.g. "Cannot read properties of null"): the request's params were not
 * what the method takes. Said in our words as InvalidParams; the original goes to the log. Our
 * own internal failures already carry {@link INTERNAL_MESSAGE} and stay InternalError.
 */
export function ownWords(error: JsonRpcError, method: string, logger: Logger): JsonRpcError {
  if (error.code !== A2A_ERROR_CODE.INTERNAL_ERROR || error.message === INTERNAL_MESSAGE) return error;
  logger.warn({ method, cause: error.message }, 'JSON-RPC params the SDK could not decode');
  return {
    code: A2A_ERROR_CODE.INVALID_PARAMS,
    message: `Invalid params: they do not have the shape ${method} takes`,
  };
}

export function sendJson(
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
export function sendText(
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
