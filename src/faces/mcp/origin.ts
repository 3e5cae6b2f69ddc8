import type express from 'express';
import { CODE, replyError } from './jsonrpc.js';

/** Host names no page of another site can have as its origin: a rebinding attack cannot claim them. */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * MCP's Streamable HTTP transport requires it: a request whose `Origin` names another site is refused
 * (403), so that a web page which rebinds its own name to this server's address (DNS rebinding)
 * cannot drive the tools from a visitor's browser. Clients that are not browsers send no Origin and
 * pass. Allowed: this server's own origin (`baseUrl`, PUBLIC_URL or the address it listens on),
 * loopback names, and the origins an operator lists (MCP_ALLOWED_ORIGINS, e.g. a hosted inspector).
 */
export function originGuard(baseUrl: () => string, allowed: ReadonlySet<string>): express.RequestHandler {
  return (req, res, next) => {
    const origin = req.get('Origin');
    if (origin === undefined || isAllowed(origin, baseUrl(), allowed)) {
      next();
      return;
    }
    res
      .status(403)
      .json(
        replyError(
          null,
          CODE.invalidRequest,
          `Origin ${JSON.stringify(origin.slice(0, 200))} may not call this MCP endpoint (a page of another site); ` +
            'an operator who trusts it adds it to MCP_ALLOWED_ORIGINS (comma-separated origins, e.g. http://localhost:6274)',
        ),
      );
  };
}

function isAllowed(origin: string, baseUrl: string, allowed: ReadonlySet<string>): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (a sandboxed page, a file) and anything unparsable
  }
  if (allowed.has(url.origin)) return true;
  if (baseUrl && url.origin === new URL(baseUrl).origin) return true;
  return LOOPBACK_NAMES.has(url.hostname);
}
