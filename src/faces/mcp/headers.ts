import type { Request } from 'express';
import { CODE, RpcRefusal } from './jsonrpc.js';
import { STATELESS_VERSION } from './revision.js';

/** What `Mcp-Name` carries for a method: a tool's name, or the task id (SEP-2663's routing header). */
const NAME_OF: Record<string, string> = {
  'tools/call': 'name',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/** A header value in the Base64 sentinel form (`=?base64?...?=`) decoded; any other as it is. */
function decoded(value: string): string {
  const match = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(value);
  return match ? Buffer.from(match[1] ?? '', 'base64').toString('utf8') : value;
}

const mismatch = (message: string) =>
  new RpcRefusal(CODE.headerMismatch, `Header mismatch: ${message}`, undefined, 400);

/**
 * 2026-07-28's standard request headers, checked against the body (HTTP 400, -32020 otherwise):
 * `MCP-Protocol-Version` as `_meta` says, `Mcp-Method` the method, and `Mcp-Name` the tool's name
 * (`tools/call`) or the task id (`tasks/*`), so that a load balancer routing on them routes what
 * this server runs.
 */
export function checkHeaders(req: Request, method: string, params: Record<string, unknown>): void {
  const version = req.get('MCP-Protocol-Version');
  if (version !== STATELESS_VERSION) {
    throw mismatch(
      `MCP-Protocol-Version header ${JSON.stringify(version ?? null)} does not match body value "${STATELESS_VERSION}"`,
    );
  }
  const sent = req.get('Mcp-Method');
  if (sent !== method) {
    throw mismatch(
      `Mcp-Method header ${JSON.stringify(sent ?? null)} does not match body value ${JSON.stringify(method)}`,
    );
  }
  const field = NAME_OF[method];
  const body = field === undefined ? undefined : params[field];
  if (typeof body !== 'string') return;
  const name = req.get('Mcp-Name');
  if (name === undefined || decoded(name) !== body) {
    throw mismatch(
      `Mcp-Name header ${JSON.stringify(name ?? null)} does not match body value ${JSON.stringify(body)}`,
    );
  }
}
