import type { InFlightKeys } from '../jobs/idempotency.js';
import type { Answer, Call } from './call.js';
import { CODE, RpcRefusal } from './jsonrpc.js';
import { listen } from './listen.js';
import type { McpOptions } from './options.js';
import { discoverResult, initializeResult, TOOLS_TTL_MS } from './revision.js';
import { SESSION_HEADER, sessionIdFor } from './session.js';
import { cancelTask, getTask, listTasks, taskResult, updateTask } from './tasks.js';
import { callTool } from './tool-call.js';
import { toolsFor } from './tools.js';

export type Method = (c: Call) => Promise<Answer>;

/** The JSON-RPC methods this face answers, each by name to its handler (tools, tasks, listen). */
export function methodsFor(o: McpOptions, inFlight: InFlightKeys): Record<string, Method> {
  return {
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
