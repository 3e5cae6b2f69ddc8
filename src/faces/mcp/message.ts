import type { Request } from 'express';
import { BodyRefused, isJsonContentType, readJson } from '../http/body.js';
import { CODE, Incoming, RpcRefusal } from './jsonrpc.js';
import type { McpOptions } from './options.js';
import { SUPPORTED_VERSIONS } from './revision.js';

const refused = (status: number, message: string, code: number = CODE.invalidRequest) =>
  new RpcRefusal(code, message, undefined, status);

/**
 * The one JSON-RPC message a POST carries, within the body limits, or why not (HTTP 400, 413, 415):
 * a protocol version header we do not speak, a body that is not JSON (-32700), a batch, or no
 * JSON-RPC message at all.
 */
export async function readMessage(o: McpOptions, req: Request): Promise<Incoming | RpcRefusal> {
  const version = req.get('MCP-Protocol-Version');
  if (version !== undefined && !SUPPORTED_VERSIONS.includes(version)) {
    return refused(
      400,
      `MCP-Protocol-Version ${JSON.stringify(version)} is not supported; use one of ${SUPPORTED_VERSIONS.join(', ')}`,
    );
  }
  if (!isJsonContentType(req.get('Content-Type'))) {
    return refused(415, 'Send the JSON-RPC message as Content-Type: application/json');
  }
  let body: unknown;
  try {
    body = await readJson(req, o);
  } catch (err) {
    if (!(err instanceof BodyRefused)) throw err;
    return refused(
      err.status,
      err.message,
      err.problem.kind === 'not-json' ? CODE.parseError : CODE.invalidRequest,
    );
  }
  if (Array.isArray(body)) {
    return refused(400, 'Send one JSON-RPC message per POST: batches are not part of MCP since 2025-06-18');
  }
  const parsed = Incoming.safeParse(body);
  if (!parsed.success) {
    return refused(400, 'Send a JSON-RPC 2.0 message: {"jsonrpc": "2.0", "id", "method", "params"?}');
  }
  return parsed.data;
}
