import express from 'express';
import { InFlightKeys } from '../jobs/idempotency.js';
import { CODE, replyError } from './jsonrpc.js';
import { methodsFor } from './methods.js';
import type { McpOptions } from './options.js';
import { originGuard } from './origin.js';
import { postMessage } from './post.js';
import { resumeStream } from './resume.js';

export const MCP_PATH = '/mcp';

/**
 * `/mcp`: the engine's skills as MCP tools and its tasks as MCP tasks, over Streamable HTTP,
 * stateless: no session id is issued and nothing is kept between requests (a task lives in the
 * engine, reached by its id and the caller's identity), so any instance answers any request.
 * Requests of 2026-07-28 (per-request `_meta`) get the Tasks extension (SEP-2663); those of the
 * handshake revisions get 2025-11-25's tasks. See docs/mcp.md. The methods live in methods.ts, the
 * POST of a message in post.ts, the GET that resumes a stream in resume.ts.
 * @example app.use(MCP_PATH, mcpRouter({ engine, admit, audit, version, ...bodyAndStreams }));
 */
export function mcpRouter(o: McpOptions): express.Router {
  const router = express.Router();
  router.use(originGuard(o.baseUrl, o.allowedOrigins));
  router.post('/', postMessage(o, methodsFor(o, new InFlightKeys())));
  router.get('/', resumeStream(o));
  router.all('/', (_req, res) => {
    res
      .status(405)
      .set('Allow', 'POST')
      .json(
        replyError(
          null,
          CODE.invalidRequest,
          'This MCP endpoint is stateless: POST each JSON-RPC message to it (no GET stream: for task notifications POST subscriptions/listen, protocol 2026-07-28; its session ids keep nothing, so there is no session to DELETE)',
        ),
      );
  });
  return router;
}
