import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { toLegacyHTTPError } from '@a2a-js/sdk/compat/v0_3/server';
import { A2A_ERROR_CODE, RequestMalformedError, toRestErrorBody } from '@a2a-js/sdk/errors';
import { type A2ARequestHandler, UnauthenticatedUser } from '@a2a-js/sdk/server';
import { restHandler } from '@a2a-js/sdk/server/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { pollWaitMs } from '../generation.js';
import type { FaceOptions } from '../http/admission.js';
import {
  type BodyLimits,
  BodyRefused,
  hasBody,
  isJsonContentType,
  parseJson,
  readBody,
} from '../http/body.js';
import { clientErrorOf } from '../http/http-error.js';
import { keepAlive } from '../http/sse.js';
import { REST_PATH } from './agent-card.js';
import { type CallState, finalizeLegacyEvent, newCallContext, newCallState } from './call-state.js';
import { INTERNAL_MESSAGE, REFUSAL_CODES } from './errors.js';
import { foreignMessage } from './foreign-body.js';
import { generationAsk } from './generation-params.js';
import { holdOpen } from './hold.js';
import { legacyPushConfigBody } from './legacy-push-body.js';
import { listLegacyTasks } from './legacy-rest-list.js';
import { problemOf, REST_BODIES } from './params.js';
import { requestedVersion, versionNotSupported } from './version.js';

export interface RestOptions extends FaceOptions {
  handler: A2ARequestHandler;
  /** Where internal failures are logged (callers get no detail of them). */
  logger: Logger;
}

/**
 * HTTP+JSON (REST): v1.0 routes (`/message:send`, `/tasks/{id}`, ...) and v0.3 routes (`/v1/...`),
 * served by the SDK's REST router over our request handler. We add what the SDK's router lacks:
 * a configurable body limit (413), SSE event ids, Last-Event-ID resumption and keep-alives.
 */
export function restRouter(o: RestOptions): express.Router {
  // The SDK builds the call context from the request headers; this is how ours finds its request.
  const states = new WeakMap<IncomingHttpHeaders, CallState>();
  const router = express.Router();

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    const legacy = isLegacy(req);
    // The path picks the version; a header that names one we do not speak is still refused (spec 3.6.2).
    const asked = requestedVersion(req);
    if (!asked.ok) {
      const error = versionNotSupported(asked.message);
      res.status(400).json(legacy ? toLegacyHTTPError(error) : toRestErrorBody(error, 400));
      return;
    }
    const auth = await o.admit(req);
    if (!auth.ok) {
      const { status, kind, message, headers } = auth.refusal;
      const { code, restStatus } = REFUSAL_CODES[kind];
      // v1.0: google.rpc.Status, as the SDK writes its errors; v0.3: the JSON-RPC error object.
      res
        .status(status)
        .set(headers)
        .json(legacy ? { code, message } : { error: { code: status, status: restStatus, message } });
      return;
    }
    // The SDK passes a v0.3 request its v0.3 routes do not serve on to its v1.0 routes (as tenant
    // "v1"), which answer in v1.0's shape: a v0.3 caller gets its own 404 instead.
    if (legacy && !isLegacyRoute(req.method, req.path)) {
      noSuchEndpoint(res, true);
      return;
    }
    const state = newCallState(req, res, {
      principal: auth.principal,
      transport: 'rest',
      version: legacy ? '0.3' : '1.0',
      shutdown: o.shutdown,
    });
    states.set(req.headers, state);
    withSseIds(res, state, o.keepAliveMs);
    withRetryAfter(res);
    withOwnWords(res, legacy, o.logger);
    // A blocking send that waits keeps its answer alive (hold.ts); the SDK's v0.3 router answers 201.
    if (req.method === 'POST' && SEND.test(req.path)) withHold(res, state, o.keepAliveMs, legacy ? 201 : 200);
    try {
      req.body = await restBody(req, o);
      const push = legacy && req.method === 'POST' ? legacyPushConfigBody(req.path, req.body) : undefined;
      if (push && 'problem' in push) {
        refuse(res, legacy, 400, `Invalid params: ${push.problem}`);
        return;
      }
      if (push) req.body = push.body;
      // A POST's JSON body (others have none the SDK reads, or a Content-Type it refuses itself).
      const bad = req.method === 'POST' && req.body !== undefined && bodyProblem(req.path, legacy, req.body);
      if (bad) {
        refuse(res, legacy, 400, `Invalid params: ${bad}`);
        return;
      }
      const generation = generationAsk(restMethodOf(req.method, req.path), restParams(req));
      if ('problem' in generation) {
        refuse(res, legacy, 400, `Invalid params: ${generation.problem}`);
        return;
      }
      state.generation = generation.ask;
      state.pollWaitMs = pollWaitMs(req.headers.prefer);
    } catch (err) {
      if (!(err instanceof BodyRefused)) throw err;
      // A body not read to its end (too large, compressed) leaves the connection in no known state.
      if (err.problem.kind === 'too-large' || err.problem.kind === 'encoding')
        res.setHeader('Connection', 'close');
      refuse(res, legacy, err.status, err.message);
      return;
    }
    next();
  });

  // v0.3's tasks/list (GET /v1/tasks), which the SDK's v0.3 router lacks: legacy-rest-list.ts.
  router.get(/^\/v1\/tasks\/?$/, async (req: Request, res: Response, next: NextFunction) => {
    if (!isLegacy(req)) return next();
    const state = states.get(req.headers);
    if (!state) return next(new Error('REST call without request state'));
    try {
      const page = await listLegacyTasks(
        o.handler,
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
  });
  router.use(
    restHandler({
      requestHandler: o.handler,
      userBuilder: async () => new UnauthenticatedUser(),
      legacyCompat: { enabled: true },
      contextBuilder: (opts) => {
        const state = states.get(opts.headers as IncomingHttpHeaders);
        if (!state) throw new Error('REST call without request state');
        return newCallContext(state, opts.extensions ?? []);
      },
    }),
  );
  router.use((req, res) => noSuchEndpoint(res, isLegacy(req)));
  // What the SDK's router or the framework could not serve (a malformed %-escape in the path, a
  // failure of ours): the caller's 4xx in our words, in this face's shape; an internal failure logged.
  router.use((err: unknown, req: Request, res: Response, next: NextFunction) => {
    const client = clientErrorOf(err);
    if (!client) o.logger.error({ err, method: req.method, url: req.originalUrl }, 'request failed');
    if (res.headersSent) return next(err);
    refuse(res, isLegacy(req), client?.status ?? 500, client?.message ?? INTERNAL_MESSAGE);
  });
  return router;
}

/**
 * The routes whose bodies the SDK decodes, by version: their fields' types are checked first (see
 * params.ts). v1.0 routes may come under a tenant (`/{tenant}/message:send`).
 */
const BODY_ROUTES: Record<'1.0' | '0.3', [RegExp, keyof (typeof REST_BODIES)['1.0']][]> = {
  '1.0': [
    [/^(\/[^/]+)?\/message:(send|stream)\/?$/, 'send'],
    [/^(\/[^/]+)?\/tasks\/[^/]+\/pushNotificationConfigs\/?$/, 'pushConfig'],
  ],
  '0.3': [
    [/^\/v1\/message:(send|stream)\/?$/, 'send'],
    [/^\/v1\/tasks\/[^/]+\/pushNotificationConfigs\/?$/, 'pushConfig'],
  ],
};

/**
 * What is wrong with a POST's body on a route whose body the SDK decodes: a message in another
 * version's or binding's shape (foreign-body.ts), else the first field of the wrong type.
 */
function bodyProblem(path: string, legacy: boolean, body: unknown): string | undefined {
  const version = legacy ? '0.3' : '1.0';
  const kind = BODY_ROUTES[version].find(([route]) => route.test(path))?.[1];
  if (!kind) return undefined;
  const foreign = kind === 'send' ? foreignMessage({ transport: 'rest', version }, body) : undefined;
  return foreign ?? problemOf(REST_BODIES[version][kind], body);
}

/**
 * A path no route serves, answered with where the routes of each version are. In v0.3's shape the
 * code is MethodNotFound, which is what a missing route is (the SDK's mapping would say Internal).
 */
function noSuchEndpoint(res: Response, legacy: boolean): void {
  if (legacy) {
    res.status(404).json({ code: A2A_ERROR_CODE.METHOD_NOT_FOUND, message: NO_SUCH_ENDPOINT.legacy });
    return;
  }
  refuse(res, false, 404, NO_SUCH_ENDPOINT.current);
}

const NO_SUCH_ENDPOINT = {
  current:
    `No such REST endpoint. v1.0 routes (send A2A-Version: 1.0): POST ${REST_PATH}/message:send, ` +
    `GET ${REST_PATH}/tasks, GET ${REST_PATH}/tasks/{id}; v0.3 routes are under ${REST_PATH}/v1; ` +
    'the agent card lists every interface',
  legacy:
    `No such v0.3 REST endpoint. v0.3 routes (no A2A-Version header): POST ${REST_PATH}/v1/message:send, ` +
    `GET ${REST_PATH}/v1/tasks, GET ${REST_PATH}/v1/tasks/{id}; v1.0 routes are under ${REST_PATH} with A2A-Version: 1.0`,
};

/**
 * The SDK's REST router answers a JS failure while decoding a request (a `null` where its decoder
 * reads an object) with 500 and the JS message. Our internal failures carry {@link INTERNAL_MESSAGE};
 * any other 500 is a request the route could not read: a 400 in our words, the original logged.
 */
function withOwnWords(res: Response, legacy: boolean, logger: Logger): void {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    const canonical = legacy ? undefined : CANONICAL_STATUS[res.statusCode];
    const refusal = (body as { error?: { status?: unknown } } | undefined)?.error;
    // Our own refusals ride on the SDK's UnsupportedOperation (FAILED_PRECONDITION): a 429 or 403
    // says its own AIP-193 status, as the HTTP status does.
    if (canonical && refusal && typeof refusal === 'object') refusal.status = canonical;
    if (res.statusCode !== 500) return json(body);
    const b = body as { message?: unknown; error?: { message?: unknown } } | undefined;
    const message = legacy ? b?.message : b?.error?.message;
    if (message === INTERNAL_MESSAGE) return json(body);
    logger.warn({ cause: message, url: res.req.originalUrl }, 'REST request the SDK could not decode');
    const error = new RequestMalformedError(
      'Invalid params: the request does not have the shape this route takes',
    );
    res.status(400);
    return json(legacy ? toLegacyHTTPError(error) : toRestErrorBody(error, 400));
  };
}

/** The AIP-193 status of the HTTP statuses our own refusals answer with. */
const CANONICAL_STATUS: Record<number, string> = {
  403: 'PERMISSION_DENIED',
  // TaskGenerationMismatchError, the A2A 1.1 draft's only 409 (section 11.6's example).
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
};

/** The routes of the SDK's v0.3 REST router (`:id` stands for one path segment), and our tasks/list. */
const LEGACY_ROUTES: [methods: string[], path: RegExp][] = [
  [['GET', 'HEAD'], /^\/v1\/card\/?$/],
  [['POST'], /^\/v1\/message:(send|stream)\/?$/],
  [['POST'], /^\/v1\/tasks\/[^/]+:cancel\/?$/],
  [['GET', 'HEAD', 'POST'], /^\/v1\/tasks\/[^/]+:subscribe\/?$/],
  [['GET', 'HEAD'], /^\/v1\/tasks\/?$/],
  [['GET', 'HEAD'], /^\/v1\/tasks\/[^/]+\/?$/],
  [['GET', 'HEAD', 'POST'], /^\/v1\/tasks\/[^/]+\/pushNotificationConfigs\/?$/],
  [['GET', 'HEAD', 'DELETE'], /^\/v1\/tasks\/[^/]+\/pushNotificationConfigs\/[^/]+\/?$/],
];

const isLegacyRoute = (method: string, path: string): boolean =>
  LEGACY_ROUTES.some(([methods, re]) => methods.includes(method) && re.test(path));

/**
 * Whether the SDK serves this request with its v0.3 REST router: a path under /v1/ asked without
 * a version or as v0.3 (asked as v1.0, `/v1/...` is a v1.0 path whose tenant is "v1"). A version we
 * do not speak is answered in the shape the path implies.
 */
function isLegacy(req: Request): boolean {
  if (!req.path.startsWith('/v1/')) return false;
  const asked = requestedVersion(req);
  return !asked.ok || asked.version === '0.3';
}

/** An error in the REST shape of the version: v1.0 google.rpc.Status, v0.3 the JSON-RPC error object. */
function refuse(res: Response, legacy: boolean, status: number, message: string): void {
  const error =
    status === 400 || status === 413 || status === 415
      ? new RequestMalformedError(message)
      : new Error(message);
  res.status(status).json(legacy ? toLegacyHTTPError(error) : toRestErrorBody(error, status));
}

/**
 * A request's body, read within the limits whatever the method (a GET with a body over the limit
 * is a 413, as a POST is). A JSON POST's body must be an object: every v1.0 request is one, and the
 * SDK sets the tenant of a tenant-prefixed path on it. v0.3 clients send `null` or nothing for no
 * parameters: that is `{}`. Other requests' bodies are read and dropped.
 */
async function restBody(req: Request, limits: BodyLimits): Promise<unknown> {
  if (!hasBody(req)) return req.method === 'POST' ? {} : undefined;
  const json = req.method === 'POST' && isJsonContentType(req.headers['content-type']);
  // A body the SDK refuses for its Content-Type is left to it, unread.
  if (!json && !isJsonContentType(req.headers['content-type'])) return undefined;
  const text = await readBody(req, limits.maxBodyBytes);
  if (!json) return undefined;
  if (text.trim() === '') return {};
  const body = parseJson(text, limits.maxJsonDepth);
  if (body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new BodyRefused({ kind: 'not-json', status: 400, message: 'The body must be a JSON object' });
  }
  return body;
}

/** The non-streaming send of either version (v1.0's under a tenant too). */
const SEND = /^(\/[^/]+)?\/message:send\/?$/;

/**
 * The method a REST route serves, of those that take the generations extension's fields (the
 * JSON-RPC method name stands for it; '' for the rest). v1.0 routes may come under a tenant, v0.3's
 * under /v1.
 */
function restMethodOf(method: string, path: string): string {
  if (method === 'GET' && /^(\/[^/]+)?\/tasks\/[^/:]+\/?$/.test(path)) return 'GetTask';
  if (method !== 'POST') return '';
  if (/^(\/[^/]+)?\/tasks\/[^/]+:cancel\/?$/.test(path)) return 'CancelTask';
  if (/^(\/[^/]+)?\/message:(send|stream)\/?$/.test(path)) return 'SendMessage';
  return '';
}

/** Where a REST call carries its fields: the query of a GET, the JSON body of a POST. */
const restParams = (req: Request): unknown => (req.method === 'GET' ? req.query : req.body);

/**
 * Lets the handler hold a blocking send's answer open (hold.ts) with `status`, the one the SDK's
 * router answers a send with. The SDK then writes the task with `res.json`, which here follows the
 * spaces. A held send that fails after all (the store unreachable) can no longer say so with its
 * status: its connection is cut, so that the client sees a failure rather than a 200 without a task.
 */
function withHold(res: Response, state: CallState, keepAliveMs: number, status: number): void {
  let stop: (() => void) | undefined;
  let answered = false;
  state.hold = () => {
    stop ??= holdOpen(res, keepAliveMs, status);
  };
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    stop?.();
    if (!res.headersSent) return json(body);
    answered = res.statusCode === status;
    if (answered) res.end(JSON.stringify(body));
    else res.destroy();
    return res;
  };
  // The SDK ends a response whose headers are out without a body when the call failed.
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    if (stop === undefined || !res.headersSent || answered) return end(...args);
    stop();
    res.destroy();
    return res;
  }) as Response['end'];
}

/** When a slot frees is unknown: a caller over its task limit is told to look again after this. */
const TOO_MANY_TASKS_RETRY_AFTER_S = 5;

/** A 429 the SDK's router writes (our too-many-tasks error) gets the Retry-After that 429 calls for. */
function withRetryAfter(res: Response): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
    if (args[0] === 429 && !this.hasHeader('Retry-After')) {
      this.setHeader('Retry-After', String(TOO_MANY_TASKS_RETRY_AFTER_S));
    }
    return writeHead.apply(this, args);
  } as Response['writeHead'];
}

/**
 * The SDK's router writes each SSE event as `data: ...` with no id. Prefix the id (the sequence
 * number our handler recorded before yielding that event), mark a v0.3 stream's closing update
 * `final`, and keep the stream alive while idle.
 */
function withSseIds(res: ServerResponse, state: CallState, keepAliveMs: number): void {
  const write = res.write.bind(res) as (chunk: unknown, ...rest: unknown[]) => boolean;
  let alive = false;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    const sse = String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');
    if (!sse || typeof chunk !== 'string') return write(chunk, ...rest);
    if (!alive) {
      alive = true;
      keepAlive(res, keepAliveMs, write);
    }
    if (!chunk.startsWith('data: ')) return write(chunk, ...rest);
    let data = chunk;
    if (state.version === '0.3' && state.cursor.closing) {
      const event: unknown = JSON.parse(chunk.slice('data: '.length));
      finalizeLegacyEvent(event, state.cursor);
      data = `data: ${JSON.stringify(event)}\n\n`;
    }
    const id = state.cursor.seq;
    return write(id === undefined ? data : `id: ${id}\n${data}`, ...rest);
  }) as ServerResponse['write'];
}
