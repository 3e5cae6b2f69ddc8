import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { toLegacyHTTPError } from '@a2a-js/sdk/compat/v0_3/server';
import { RequestMalformedError, toRestErrorBody, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { type A2ARequestHandler, UnauthenticatedUser } from '@a2a-js/sdk/server';
import { restHandler } from '@a2a-js/sdk/server/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import { BodyTooLarge, isJsonContentType, readBody } from '../http/body.js';
import type { Admission } from './admission.js';
import { type CallState, finalizeLegacyEvent, newCallContext, newCallState } from './call-state.js';
import { requestedVersion } from './version.js';

export interface RestOptions {
  handler: A2ARequestHandler;
  /** Who is calling, and whether they may now (401 without valid credentials, 429 over their rate). */
  admit: (req: IncomingMessage) => Promise<Admission>;
  maxBodyBytes: number;
  keepAliveMs: number;
  /** Aborted at shutdown: waits answer with the task as it stands, streams end. */
  shutdown: AbortSignal;
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
    // The SDK serves v0.3 REST under /v1/ and v1.0 REST at the root of this router.
    const legacy = req.path.startsWith('/v1/');
    // The path picks the version; a header that names one we do not speak is still refused (spec 3.6.2).
    const asked = requestedVersion(req);
    if (!asked.ok) {
      const error = new VersionNotSupportedError(asked.message);
      res.status(400).json(legacy ? toLegacyHTTPError(error) : toRestErrorBody(error, 400));
      return;
    }
    const auth = await o.admit(req);
    if (!auth.ok) {
      const { status, code, restStatus, message, headers } = auth.refusal;
      // v1.0: google.rpc.Status, as the SDK writes its errors; v0.3: the JSON-RPC error object.
      res
        .status(status)
        .set(headers)
        .json(legacy ? { code, message } : { error: { code: status, status: restStatus, message } });
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
    if (req.method !== 'POST' || !isJsonContentType(req.headers['content-type'])) return next();
    try {
      const text = await readBody(req, o.maxBodyBytes);
      req.body = text.trim() === '' ? {} : JSON.parse(text);
      next();
    } catch (err) {
      const tooLarge = err instanceof BodyTooLarge;
      const status = tooLarge ? 413 : 400;
      const error = new RequestMalformedError(tooLarge ? err.message : 'The body is not valid JSON');
      if (tooLarge) res.setHeader('Connection', 'close');
      res.status(status).json(legacy ? toLegacyHTTPError(error) : toRestErrorBody(error, status));
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
  return router;
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
  let keepAlive: NodeJS.Timeout | undefined;
  const stop = () => clearInterval(keepAlive);
  res.once('close', stop);
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    const sse = String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');
    if (!sse || typeof chunk !== 'string') return write(chunk, ...rest);
    if (!keepAlive) {
      keepAlive = setInterval(() => {
        if (!res.writableEnded) write(': keep-alive\n\n');
      }, keepAliveMs);
      keepAlive.unref();
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
