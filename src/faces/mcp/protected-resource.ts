import type { RequestHandler } from 'express';
import { MCP_PATH } from './router.js';

/** Where MCP clients look for the protected-resource metadata of /mcp (RFC 9728, path-suffixed form). */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

export const protectedResourceUrl = (baseUrl: string): string =>
  `${baseUrl}${PROTECTED_RESOURCE_PATH}${MCP_PATH}`;

/**
 * The OAuth 2.0 protected-resource metadata of /mcp (RFC 9728, as MCP's authorization spec asks):
 * the resource, and the authorization server that issues the bearer JWTs it takes (JWT_ISSUER).
 * Served at the root and at the path-suffixed address; a 401 from /mcp names it.
 */
export const serveProtectedResource =
  (o: { baseUrl: () => string; issuer: string }): RequestHandler =>
  (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json({
      resource: `${o.baseUrl()}${MCP_PATH}`,
      authorization_servers: [o.issuer],
      bearer_methods_supported: ['header'],
      resource_name: 'taskhandle MCP endpoint',
    });
  };
