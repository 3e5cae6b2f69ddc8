import express from 'express';
import { ownerKey, type Principal } from '../../auth/principal.js';
import { isEngineError } from '../../engine/errors.js';
import { traceMcp } from '../../telemetry/mcp-spans.js';
import { InFlightKeys } from '../jobs/idempotency.js';
import { admitted } from './admit.js';
import { type Answer, type Call, callOf, STREAMED } from './call.js';
import { parseElicitationId } from './follow.js';
import { checkHeaders } from './headers.js';
import { ElicitResult, pendingInput } from './input-request.js';
import { CODE, engineRefusal, type Incoming, type RequestId, RpcRefusal, replyError } from './jsonrpc.js';
import { listen } from './listen.js';
import { readMessage } from './message.js';
import type { McpOptions } from './options.js';
import { originGuard } from './origin.js';
import { resumeStream } from './resume.js';
import {
  discoverResult,
  initializeResult,
  type Revision,
  resultMeta,
  revisionOf,
  TOOLS_TTL_MS,
} from './revision.js';
import { declaredBySession, SESSION_HEADER, sessionIdFor } from './session.js';
import { cancelTask, getTask, listTasks, respond, taskResult, updateTask } from './tasks.js';
import { callTool } from './tool-call.js';
import { toolsFor } from './tools.js';

export const MCP_PATH = '/mcp';

type Method = (c: Call) => Promise<Answer>;

/**
 * `/mcp`: the engine's skills as MCP tools and its tasks as MCP tasks, over Streamable HTTP,
 * stateless: no session id is issued and nothing is kept between requests (a task lives in the
 * engine, reached by its id and the caller's identity), so any instance answers any request.
 * Requests of 2026-07-28 (per-request `_meta`) get the Tasks extension (SEP-2663); those of the
 * handshake revisions get 2025-11-25's tasks. See docs/mcp.md.
 * @example app.use(MCP_PATH, mcpRouter({ engine, admit, audit, version, ...bodyAndStreams }));
 */
export function mcpRouter(o: McpOptions): express.Router {
  const inFlight = new InFlightKeys();
  const methods: Record<string, Method> = {
    initialize: handshakeOnly(
      'initialize is not part of protocol 2026-07-28: call server/discover',
      async (c) => {
        const result = initializeResult(c.params, c.principal, o.version());
        // What the client declared, for the requests after this one: see session.ts.
        c.res.set(SESSION_HEADER, sessionIdFor(c.params.capabilities, result.protocolVersion));
        return result;
      },
    ),
    ping: handshakeOnly('ping is not part of protocol 2026-07-28 (it was removed)', async () => ({})),
    'server/discover': async (c) => discoverResult(c.principal, o.version()),
    'tools/list': async (c) =>
      c.revision.kind === 'handshake'
        ? { tools: toolsFor(o.engine.skills, c.policy) }
        : // A cacheable result (2026-07-28): filtered per caller, so never to share across credentials.
          { tools: toolsFor(o.engine.skills, c.policy, false), ttlMs: TOOLS_TTL_MS, cacheScope: 'private' },
    'tools/call': (c) => callTool(c, inFlight),
    'tasks/get': getTask,
    'tasks/cancel': cancelTask,
    'tasks/result': handshakeOnly(
      'tasks/result is not part of the Tasks extension: tasks/get carries the result',
      taskResult,
    ),
    'tasks/list': handshakeOnly(
      'tasks/list is not part of the Tasks extension: keep the task ids you were given',
      listTasks,
    ),
    // The extension's; under 2025-11-25 too, for clients that take no elicitation (docs/mcp.md).
    'tasks/update': updateTask,
    'subscriptions/listen': statelessOnly(
      'subscriptions/listen is a method of protocol 2026-07-28: send its _meta fields, or follow a task with tasks/result',
      listen,
    ),
  };

  const router = express.Router();
  router.use(originGuard(o.baseUrl, o.allowedOrigins));
  router.post('/', async (req, res) => {
    const principal = await admitted(o, req, res);
    if (!principal) return;
    const message = await readMessage(o, req);
    if (message instanceof RpcRefusal) {
      res.status(message.httpStatus).json(replyError(null, message.code, message.message));
      return;
    }
    if (!('method' in message)) {
      if (declaredBySession(req).formElicitation) await takeResponse(o, principal, message);
      res.status(202).end();
      return;
    }
    if (!('id' in message)) {
      res.status(202).end(); // notifications (initialized, cancelled...) change nothing here
      return;
    }
    const { id, method } = message;
    const params = message.params ?? {};
    try {
      const revision: Revision = revisionOf(params);
      if (revision.kind === 'stateless') checkHeaders(req, method, params);
      const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
      if (!handler) {
        throw new RpcRefusal(
          CODE.methodNotFound,
          `Method "${method}" not found; this server answers ${Object.keys(methods).join(', ')}`,
          undefined,
          // 2026-07-28 answers an unknown method with 404, which a legacy endpoint's 404 lacks the body of
          revision.kind === 'stateless' ? 404 : 200,
        );
      }
      const call = callOf(o, req, res, principal, { revision, id, method, params });
      const isTool = (name: string) => o.engine.skills.get(name) !== undefined;
      const result = await traceMcp(method, params, isTool, () => handler(call));
      if (result === STREAMED) return;
      const meta =
        revision.kind === 'stateless'
          ? {
              resultType: 'complete',
              ...result,
              _meta: { ...resultMeta(o.version()), ...(result._meta as object | undefined) },
            }
          : result;
      res.json({ jsonrpc: '2.0', id, result: meta });
    } catch (err) {
      const refusal = err instanceof RpcRefusal ? err : isEngineError(err) ? engineRefusal(err) : undefined;
      if (!refusal) throw err;
      if (res.headersSent) return void res.end();
      res
        .status(refusal.httpStatus)
        .json(replyError(id as RequestId, refusal.code, refusal.message, refusal.data));
    }
  });
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

/** A method of 2026-07-28 only: -32601 under the handshake revisions. */
const statelessOnly =
  (refusal: string, m: Method): Method =>
  (c) => {
    if (c.revision.kind === 'stateless') return m(c);
    throw new RpcRefusal(CODE.methodNotFound, refusal);
  };

/**
 * A method of the handshake revisions only (2026-07-28 and the extension dropped it): -32601 there,
 * with HTTP 404, as 2026-07-28 answers any method it does not implement.
 */
const handshakeOnly =
  (refusal: string, m: Method): Method =>
  (c) => {
    if (c.revision.kind === 'handshake') return m(c);
    throw new RpcRefusal(CODE.methodNotFound, refusal, undefined, 404);
  };

/**
 * A client's response to a request of ours: an elicitation this face sent for a task's question
 * (its id names both), from a client whose session says it declared elicitation (a client that
 * declared none was sent none: what it answers to an `input:` id is not an answer). Any other
 * response, an error reply, or one to a question since answered, changes nothing; nor does
 * `cancel` (see {@link respond}).
 */
async function takeResponse(o: McpOptions, principal: Principal, message: Incoming): Promise<void> {
  const about = parseElicitationId('id' in message ? message.id : undefined);
  const result = ElicitResult.safeParse('result' in message ? message.result : undefined);
  if (!about || !result.success) return;
  const owner = ownerKey(principal);
  const current = await o.engine.record(owner, about.taskId).catch(() => undefined);
  if (!current || pendingInput(current)?.key !== about.key) return;
  await respond({ o, owner, principal }, current.id, result.data);
}
