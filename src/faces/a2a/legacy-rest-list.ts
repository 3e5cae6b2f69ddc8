import type { ListTasksRequest, TaskState as SdkState, Task } from '@a2a-js/sdk';
import { toLegacyHTTPError, V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import type { NextFunction, Request, Response } from 'express';
import type { TaskState } from '../../engine/task.js';
import { STATE_NAMES } from '../states.js';
import { newCallContext } from './call-state.js';
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

// A v0.3 JSON-RPC Task (the SDK's own translation of a v1.0 one), then the v0.3 proto's JSON of it,
// field for field as the SDK's v0.3 router encodes GET /v1/tasks/{id} (part metadata and file names
// have no place in the v0.3 proto, empty strings and lists are left out).
const toV03 = new V03PushNotificationSerializer();

interface V03Part {
  kind: 'text' | 'file' | 'data';
  text?: string;
  file?: { uri?: string; bytes?: string; mimeType?: string };
  data?: unknown;
}
interface V03Message {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: 'user' | 'agent';
  parts: V03Part[];
  metadata?: unknown;
  extensions?: string[];
}
interface V03Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: V03Part[];
  metadata?: unknown;
  extensions?: string[];
}
interface V03Task {
  id: string;
  contextId: string;
  status: { state: string; message?: V03Message; timestamp?: string };
  artifacts?: V03Artifact[];
  history?: V03Message[];
  metadata?: unknown;
}

function legacyRestTask(task: Task): Record<string, unknown> {
  const t = JSON.parse(toV03.serialize({ payload: { $case: 'task', value: task } }).body) as V03Task;
  return defined({
    id: t.id || undefined,
    contextId: t.contextId || undefined,
    status: defined({
      state: PROTO_STATE[t.status.state],
      message: t.status.message && message(t.status.message),
      timestamp: t.status.timestamp,
    }),
    artifacts: t.artifacts?.length ? t.artifacts.map(artifact) : undefined,
    history: t.history?.length ? t.history.map(message) : undefined,
    metadata: t.metadata,
  });
}

const PROTO_STATE: Record<string, string | undefined> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELLED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
};

const message = (m: V03Message) =>
  defined({
    messageId: m.messageId || undefined,
    contextId: m.contextId || undefined,
    taskId: m.taskId || undefined,
    role: m.role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER',
    content: m.parts.length ? m.parts.map(part) : undefined,
    metadata: m.metadata,
    extensions: m.extensions?.length ? m.extensions : undefined,
  });

const artifact = (a: V03Artifact) =>
  defined({
    artifactId: a.artifactId || undefined,
    name: a.name || undefined,
    description: a.description || undefined,
    parts: a.parts.length ? a.parts.map(part) : undefined,
    metadata: a.metadata,
    extensions: a.extensions?.length ? a.extensions : undefined,
  });

function part(p: V03Part): Record<string, unknown> {
  if (p.kind === 'text') return { text: p.text };
  if (p.kind === 'data') return { data: defined({ data: p.data }) };
  const f = p.file ?? {};
  return {
    file: defined({
      ...(f.uri !== undefined ? { fileWithUri: f.uri } : { fileWithBytes: f.bytes }),
      mimeType: f.mimeType || undefined,
    }),
  };
}

/** The object without its undefined fields (as the proto's JSON leaves them out). */
function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
