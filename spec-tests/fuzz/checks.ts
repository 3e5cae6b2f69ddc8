import { type IncomingHttpHeaders, METHODS } from 'node:http';
import { TASK_STATES } from '../../src/engine/task.js';
import type { FuzzRequest } from './requests.js';

/** A response as the fuzz client read it (an event stream: its first chunk only). */
export interface FuzzResponse {
  status: number;
  contentType: string;
  text: string;
  headers?: IncomingHttpHeaders;
  /** Only the first part of a long body was read: its shape is not checked. */
  truncated?: boolean;
  /** We hung up mid-body (`hangUpAfter`) before any answer came: there is none to check. */
  hungUp?: boolean;
}

/** What must never reach a caller: JS error messages, stack frames, the database's words. */
const LEAKS: RegExp[] = [
  /at .*\(.*:\d+:\d+\)/,
  /\.(js|ts|cjs|mjs):\d+/,
  /Cannot read propert/,
  /is not a function/,
  /is not iterable/,
  /Maximum call stack/,
  /SQLITE/i,
  /\b(TypeError|RangeError|ReferenceError|SyntaxError|URIError)\b/,
  /\bundefined\b/,
  /\[object Object\]/,
  /node_modules/,
  /Unexpected token/,
  /Failed to decode param/,
];

/** The internal message `text` shows, if any (see {@link LEAKS}). */
export const leakIn = (text: string): RegExp | undefined => LEAKS.find((re) => re.test(text));

/** The face that answers a request: each has its documented error shape (README, docs/http-jobs.md). */
export type Face = 'jsonrpc' | 'mcp' | 'rest' | 'rest-v0.3' | 'problem';

export function faceOf(r: FuzzRequest): Face {
  // A method Node's parser does not know never reaches a face: the server answers it itself.
  if (!METHODS.includes(r.method)) return 'problem';
  // The workers' face (docs/workers.md) refuses with problem documents, as /v1/jobs does.
  if (isWorkers(r)) return 'problem';
  if (r.method === 'POST' && (r.path === '/' || r.path.startsWith('/?'))) return 'jsonrpc';
  // /mcp answers every method itself, each error as JSON-RPC (docs/mcp.md).
  if (/^\/mcp\/?(\?|$)/.test(r.path)) return 'mcp';
  const rest = /^\/rest(?=\/|\?|$)(.*)$/.exec(r.path);
  if (!rest) return 'problem';
  const path = rest[1] ?? '';
  if (!path.startsWith('/v1/')) return 'rest';
  // As the server decides: /v1/... is v0.3 unless asked as v1.0 (then "v1" is a tenant).
  const header = Object.entries(r.headers).find(([k]) => k.toLowerCase() === 'a2a-version')?.[1];
  const asked = (header || new URLSearchParams(path.split('?')[1] ?? '').get('A2A-Version') || '').trim();
  // Major.Minor with an optional patch number, as docs/protocol-versions.md says.
  const v = /^(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?$/.exec(asked);
  return v && Number(v[1]) === 1 && Number(v[2]) === 0 ? 'rest' : 'rest-v0.3';
}

/** Why a response breaks the rules; `undefined` when it keeps them. */
export function violation(r: FuzzRequest, res: FuzzResponse): string | undefined {
  if (res.hungUp) return undefined;
  if (res.status >= 500) return `HTTP ${res.status}`;
  const leak = leakIn(res.text);
  if (leak) return `the body shows an internal message (${leak})`;
  const worker = isWorkers(r) ? workersViolation(r, res) : undefined;
  if (worker) return worker;
  if (res.truncated) return undefined;
  // A range past the end of a download: documented as a bare 416 with its Content-Range.
  if (res.status === 416 && res.text === '') return undefined;
  if (res.status < 400 || r.method === 'HEAD') {
    const rpc = ['jsonrpc', 'mcp'].includes(faceOf(r)) && r.method !== 'HEAD';
    return rpc && res.contentType.startsWith('application/json') ? jsonRpcShape(res.text) : undefined;
  }
  // Headers (the path with them) over Node's limit are answered by the server before any face.
  const face = res.status === 431 ? 'problem' : faceOf(r);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return `a ${res.status} whose body is not JSON`;
  }
  switch (face) {
    case 'jsonrpc':
    case 'mcp':
      return jsonRpcShape(res.text);
    case 'rest': {
      const e = (body as { error?: { code?: unknown; status?: unknown; message?: unknown } }).error;
      if (e?.code !== res.status || typeof e.status !== 'string' || typeof e.message !== 'string')
        return 'a REST v1.0 error that is not {error: {code (the HTTP status), status, message}}';
      return undefined;
    }
    case 'rest-v0.3': {
      const e = body as { code?: unknown; message?: unknown };
      if (!Number.isInteger(e.code) || typeof e.message !== 'string')
        return 'a REST v0.3 error that is not {code, message}';
      return undefined;
    }
    case 'problem': {
      const e = body as { type?: unknown; title?: unknown; status?: unknown; detail?: unknown };
      if (!res.contentType.startsWith('application/problem+json')) return 'an error that is not problem+json';
      if (e.status !== res.status || typeof e.title !== 'string' || typeof e.detail !== 'string')
        return 'a problem document without its status, title and detail';
      return undefined;
    }
  }
}

/** A JSON-RPC response: `jsonrpc`, an id, and a result or an error object {code, message}. */
function jsonRpcShape(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'a JSON-RPC answer that is not JSON';
  }
  const body = parsed as {
    jsonrpc?: unknown;
    result?: unknown;
    error?: { code?: unknown; message?: unknown };
  };
  if (body.jsonrpc !== '2.0') return 'a JSON-RPC answer without jsonrpc "2.0"';
  if (body.error === undefined)
    return 'result' in body ? undefined : 'a JSON-RPC answer with neither result nor error';
  if (!Number.isInteger(body.error.code) || typeof body.error.message !== 'string')
    return 'a JSON-RPC error that is not {code, message}';
  return undefined;
}

/** A request to the workers' face: /v1/workers and below (Express matches its mount case-insensitively). */
export const isWorkers = (r: FuzzRequest): boolean => /^\/v1\/workers(?=[/?]|$)/i.test(r.path);

/** The route of a workers request: `claims`, `openapi`, a job's write (`heartbeat`...), `upload`. */
function workersRoute(r: FuzzRequest): { route: string; taskId?: string } | undefined {
  const path = (r.path.split('?')[0] ?? '').replace(/\/$/, '');
  if (r.method === 'POST' && /^\/v1\/workers\/claims$/i.test(path)) return { route: 'claims' };
  if (['GET', 'HEAD'].includes(r.method) && /^\/v1\/workers\/openapi\.json$/i.test(path))
    return { route: 'openapi' };
  const job = /^\/v1\/workers\/jobs\/([^/]+)\/([a-z]+)(\/[^/]+)?$/i.exec(path);
  if (!job) return undefined;
  let taskId: string | undefined;
  try {
    taskId = decodeURIComponent(job[1] ?? '');
  } catch {
    taskId = undefined;
  }
  const action = (job[2] ?? '').toLowerCase();
  if (job[3] !== undefined)
    return r.method === 'PUT' && action === 'artifacts' ? { route: 'upload', taskId } : undefined;
  return r.method === 'POST' ? { route: action, taskId } : undefined;
}

/**
 * The workers' own rules (docs/workers.md): only WORKERS work (a caller is refused 403 before
 * anything is read, nobody 401); a 409 says `reason: "lease-lost"`, a `reason` is only ever that or
 * `artifact-refused` (413); and every success has its documented shape, naming the task of its path.
 */
function workersViolation(r: FuzzRequest, res: FuzzResponse): string | undefined {
  const route = workersRoute(r);
  // Node answers what it cannot parse (an unknown method, headers over its limit) before any face.
  if (METHODS.includes(r.method) && res.status !== 431 && route?.route !== 'openapi') {
    const caller = r.as === 'alice' || r.as === 'bob';
    const unknown = r.as === 'nobody' || r.as === 'badkey';
    if (caller && res.status !== 403)
      return `a caller credential at /v1/workers answered ${res.status}, not 403`;
    if (unknown && res.status !== 401) return `no credential at /v1/workers answered ${res.status}, not 401`;
    if (r.as === 'robot' && (res.status === 401 || res.status === 403))
      return `the worker credential was refused ${res.status}`;
  }
  if (res.truncated || r.method === 'HEAD') return undefined;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.text) as Record<string, unknown>;
  } catch {
    return res.status < 400 || res.status === 416 ? undefined : `a ${res.status} whose body is not JSON`;
  }
  if (res.status >= 400) {
    if (res.status === 409 && body.reason !== 'lease-lost') return 'a 409 without reason "lease-lost"';
    // A waiting claim past MAX_WAITING_CLAIMS (docs/SECURITY.md, Limits): only ever a claim's answer.
    if (body.reason === 'too-many-claims')
      return route?.route === 'claims' ? tooManyClaims(res) : `a ${res.status} with reason too-many-claims`;
    if (
      body.reason !== undefined &&
      !(res.status === 413 && body.reason === 'artifact-refused') &&
      res.status !== 409
    )
      return `a ${res.status} with reason ${JSON.stringify(body.reason)}`;
    return undefined;
  }
  if (res.status !== 200 || !route) return `a ${res.status} from a route that is none of the workers'`;
  return workerAnswer(route.route, route.taskId, body);
}

/**
 * Why an answer is not the refusal of a waiting claim past MAX_WAITING_CLAIMS: 429 with Retry-After,
 * `reason: "too-many-claims"` and words naming the setting (docs/SECURITY.md, Limits).
 */
export function tooManyClaims(res: FuzzResponse): string | undefined {
  if (res.status !== 429) return `a too-many-claims refusal with status ${res.status}, not 429`;
  if (!res.contentType.startsWith('application/problem+json'))
    return 'a too-many-claims refusal that is not problem+json';
  if (!/^\d+$/.test(String(res.headers?.['retry-after'] ?? '')))
    return 'a too-many-claims refusal without Retry-After';
  let body: { reason?: unknown; detail?: unknown };
  try {
    body = JSON.parse(res.text);
  } catch {
    return 'a too-many-claims refusal whose body is not JSON';
  }
  if (body.reason !== 'too-many-claims')
    return `a 429 claim refusal with reason ${JSON.stringify(body.reason)}`;
  if (typeof body.detail !== 'string' || !/MAX_WAITING_CLAIMS/.test(body.detail))
    return 'a too-many-claims refusal whose detail does not name MAX_WAITING_CLAIMS';
  return undefined;
}

/** A claimed job as the fuzz reads it (docs/workers.md, "Claim"). */
interface ClaimedJob {
  taskId?: unknown;
  skill?: unknown;
  attempt?: unknown;
  interrupted?: unknown;
  answers?: unknown;
  lease?: { token?: unknown; expiresAt?: unknown; heartbeatMs?: unknown };
}

/** Why a worker route's 200 is not the documented answer. */
function workerAnswer(
  route: string,
  taskId: string | undefined,
  body: Record<string, unknown>,
): string | undefined {
  const isString = (v: unknown) => typeof v === 'string' && v !== '';
  const time = (v: unknown) => typeof v === 'string' && !Number.isNaN(Date.parse(v));
  const ended = () =>
    body.taskId !== taskId || !(TASK_STATES as readonly string[]).includes(String(body.state))
      ? `a ${route} answer without the path's taskId and a task state`
      : undefined;
  const lease = () => {
    if (body.taskId !== taskId) return `a ${route} answer naming another task (${String(body.taskId)})`;
    if (!(TASK_STATES as readonly string[]).includes(String(body.state)))
      return `a ${route} answer with state ${String(body.state)}`;
    if (typeof body.cancelRequested !== 'boolean') return `a ${route} answer without cancelRequested`;
    if (body.leaseExpiresAt !== undefined && !time(body.leaseExpiresAt))
      return `a ${route} answer whose leaseExpiresAt is no time`;
    return undefined;
  };
  switch (route) {
    case 'openapi':
      return String(body.openapi).startsWith('3.1') && typeof body.paths === 'object'
        ? undefined
        : 'an OpenAPI document that is not OpenAPI 3.1';
    case 'claims': {
      const jobs = body.jobs;
      if (!Array.isArray(jobs)) return 'a claim answer without jobs';
      for (const j of jobs as ClaimedJob[]) {
        if (!isString(j.taskId) || j.skill !== 'render' || !Number.isInteger(j.attempt))
          return 'a claimed job without its taskId, remote skill and attempt';
        if (typeof j.interrupted !== 'boolean' || !Array.isArray(j.answers))
          return 'a claimed job without interrupted and answers';
        if (!isString(j.lease?.token) || !time(j.lease?.expiresAt) || !Number.isInteger(j.lease?.heartbeatMs))
          return 'a claimed job without its lease {token, expiresAt, heartbeatMs}';
      }
      return undefined;
    }
    case 'heartbeat':
    case 'progress':
    case 'status':
    case 'release':
      return lease();
    case 'artifacts':
      return isString(body.artifactId) ? lease() : 'an artifact answer without its artifactId';
    case 'upload':
      return isString(body.artifactId) && Number.isInteger(body.bytes) && (body.bytes as number) >= 0
        ? lease()
        : 'an upload answer without its artifactId and bytes';
    case 'ask':
    case 'complete':
      return ended();
    case 'fail':
      return body.retryAt !== undefined && !time(body.retryAt)
        ? 'a fail answer whose retryAt is no time'
        : ended();
    default:
      return `a 200 from ${route}, which is no route of the workers`;
  }
}

/**
 * One claimed task's writes as they were answered, in order: once its lease is lost (409) or its run
 * ended (complete, fail, ask, release, an artifact refused, its owner's cancel), no later write with
 * that lease token succeeds, and the task's state is the one the ending answered. Meanwhile its owner
 * reads it and the worker does not (404).
 */
export function heldRun(taskId: string, token: string) {
  let over: string | undefined;
  let endedIn: string | undefined;
  const held = (r: FuzzRequest) => {
    const route = workersRoute(r);
    const lease = Object.entries(r.headers).find(([k]) => k.toLowerCase() === 'lease-token')?.[1];
    return r.as === 'robot' && route?.taskId === taskId && lease?.trim() === token ? route.route : undefined;
  };
  return {
    /** Why this answer to the next write breaks the rule; `undefined` when it keeps it. */
    next(r: FuzzRequest, res: FuzzResponse): string | undefined {
      const job = /^\/v1\/jobs\/([^/:?]+)(:cancel)?(\/[^?]*)?$/.exec(r.path);
      if (job?.[1] === encodeURIComponent(taskId)) {
        // The worker reads nothing over the caller faces; its owner reads the task it is working on.
        if (r.as === 'robot' && res.status !== 404)
          return `the worker read its task over /v1/jobs (${res.status})`;
        if (
          r.as === 'alice' &&
          job[3] === undefined &&
          res.status !== 200 &&
          !(job[2] || r.method === 'DELETE')
        )
          return `the owner could not read its task (${res.status})`;
        // Its owner's cancel ends it, whether it still ran or waited (for an answer, for a retry); the
        // answer is the job, canceled or as it had ended already.
        if (r.as === 'alice' && res.status === 200 && (job[2] !== undefined || r.method === 'DELETE')) {
          const state = (JSON.parse(res.text) as { state?: unknown }).state;
          if (!['completed', 'failed', 'canceled', 'rejected'].includes(String(state)))
            return `its owner's cancel answered a job that is ${String(state)}`;
          over ??= 'its owner canceled it';
          endedIn = String(state);
        }
        return undefined;
      }
      const route = held(r);
      if (route === undefined || route === 'claims' || route === 'openapi') return undefined;
      if (over !== undefined && res.status < 300) return `a ${route} with the lease succeeded after ${over}`;
      if (over !== undefined) return undefined;
      let body: { state?: unknown; reason?: unknown } = {};
      try {
        body = JSON.parse(res.text);
      } catch {}
      if (res.status === 409) over = `a 409 (${route})`;
      if (res.status === 413 && body.reason === 'artifact-refused') {
        over = `a refused artifact (${route})`;
        endedIn = 'failed';
      }
      if (res.status === 200 && route === 'heartbeat' && body.state === 'canceled') {
        over = 'a heartbeat ended it canceled';
        endedIn = 'canceled';
      }
      if (res.status === 200 && ['complete', 'fail', 'ask', 'release'].includes(route)) {
        over = `${route} answered ${String(body.state)}`;
        endedIn = route === 'release' ? undefined : String(body.state);
      }
      return undefined;
    },
    /** The state the task must be in now (`undefined`: no write said). */
    get state(): string | undefined {
      return endedIn;
    },
  };
}
