import type { ListTasksRequest, TaskState as SdkState } from '@a2a-js/sdk';
import { toLegacyHTTPError } from '@a2a-js/sdk/compat/v0_3/server';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { NextFunction, Request, Response } from 'express';
import type { TaskState } from '../../engine/task.js';
import { STATE_NAMES } from '../states.js';
import { newCallContext } from './call-state.js';
import { legacyRestTask } from './legacy-rest-wire.js';
import type { CallStates } from './rest-call.js';
import { isLegacy } from './rest-routes.js';

/** `GET /v1/tasks` of a v0.3 caller (others go on to the SDK's router): see {@link listLegacyTasks}. */
export const legacyListRoute =
  (handler: A2ARequestHandler, states: CallStates) =>
  async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (!isLegacy(req)) return next();
    const state = states.get(req.headers);
    if (!state) return next(new Error('REST call without request state'));
    try {
      const page = await listLegacyTasks(
        handler,
        req.query as Record<string, unknown>,
        newCallContext(state, []),
      );
      if (page.nextPageToken) {
        const query = new URLSearchParams(req.query as Record<string, string>);
        query.set('pageToken', page.nextPageToken);
        res.set('Link', `<${req.baseUrl}${req.path}?${query}>; rel="next"`);
      }
      res.status(200).json(page.tasks);
    } catch (err) {
      const status = err instanceof RequestMalformedError ? 400 : 500;
      res.status(status).json(toLegacyHTTPError(err));
    }
  };

/**
 * v0.3 HTTP+JSON `tasks/list`: `GET /v1/tasks`, whose answer is `[Task]` (spec v0.3, method table
 * and section 7.3.2; the v0.3 proto has no such RPC, and the SDK's v0.3 router serves none). It is
 * ListTasks over our request handler, so its authorization is ListTasks' (the caller's own tasks;
 * anonymous callers none), and its tasks are written as the SDK's v0.3 router writes GET
 * `/v1/tasks/{id}`: the v0.3 proto's JSON.
 *
 * The query takes ListTasks' parameters as v1.0's `GET /tasks` does (`contextId`, `status`,
 * `pageSize`, `pageToken`, `historyLength`, `statusTimestampAfter`, `includeArtifacts`), `status`
 * in v0.3's names (`working`, `TASK_STATE_CANCELLED`) or v1.0's. An array has no room for the next
 * page's token: it is in a `Link: <...?pageToken=...>; rel="next"` header (RFC 8288).
 */
export async function listLegacyTasks(
  handler: A2ARequestHandler,
  query: Record<string, unknown>,
  context: ServerCallContext,
): Promise<{ tasks: Record<string, unknown>[]; nextPageToken: string }> {
  const page = await handler.listTasks(listParams(query), context);
  return { tasks: page.tasks.map(legacyRestTask), nextPageToken: page.nextPageToken };
}

function listParams(q: Record<string, unknown>): ListTasksRequest {
  return {
    tenant: '',
    contextId: text(q, 'contextId') ?? '',
    status: q.status === undefined || q.status === '' ? 0 : stateOf(text(q, 'status') ?? ''),
    pageSize: whole(q, 'pageSize'),
    pageToken: text(q, 'pageToken') ?? '',
    historyLength: whole(q, 'historyLength'),
    statusTimestampAfter: text(q, 'statusTimestampAfter'),
    includeArtifacts: flag(q, 'includeArtifacts'),
  };
}

const text = (q: Record<string, unknown>, name: string): string | undefined => {
  const v = q[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new RequestMalformedError(`${name} must be given once`);
  return v;
};

function whole(q: Record<string, unknown>, name: string): number | undefined {
  const v = text(q, name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw new RequestMalformedError(`${name} must be a whole number`);
  return Number(v);
}

function flag(q: Record<string, unknown>, name: string): boolean | undefined {
  const v = text(q, name);
  if (v === undefined || v === '') return undefined;
  if (v !== 'true' && v !== 'false') throw new RequestMalformedError(`${name} must be true or false`);
  return v === 'true';
}

/** v0.3's names (`input-required`), the v0.3 proto's (`TASK_STATE_CANCELLED`), or v1.0's. */
function stateOf(name: string): SdkState {
  const key = name
    .replace(/^TASK_STATE_/, '')
    .toLowerCase()
    .replace(/_/g, '-')
    .replace('cancelled', 'canceled');
  if (!Object.hasOwn(STATE_NAMES, key))
    throw new RequestMalformedError(
      `status must be a task state: ${Object.keys(STATE_NAMES).join(', ')} (or their TASK_STATE_ names)`,
    );
  return STATE_NAMES[key as TaskState].a2a;
}
