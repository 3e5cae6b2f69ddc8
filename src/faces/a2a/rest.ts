import type { IncomingHttpHeaders } from 'node:http';
import { UnauthenticatedUser } from '@a2a-js/sdk/server';
import { restHandler } from '@a2a-js/sdk/server/express';
import express, { type NextFunction, type Request, type Response } from 'express';
import { clientErrorOf } from '../http/http-error.js';
import { newCallContext } from './call-state.js';
import { INTERNAL_MESSAGE } from './errors.js';
import { legacyListRoute } from './legacy-rest-list.js';
import { type CallStates, restCall } from './rest-call.js';
import type { RestOptions } from './rest-options.js';
import { noSuchEndpoint, refuse } from './rest-refusals.js';
import { isLegacy } from './rest-routes.js';

/**
 * HTTP+JSON (REST): v1.0 routes (`/message:send`, `/tasks/{id}`, ...) and v0.3 routes (`/v1/...`),
 * served by the SDK's REST router over our request handler. We add what the SDK's router lacks:
 * a configurable body limit (413), SSE event ids, Last-Event-ID resumption and keep-alives.
 * Each request is admitted and read first (rest-call.ts), where a v1.0 subscription and a v1.0
 * streaming send are served from the engine (rest-subscribe.ts, rest-send-stream.ts); what the SDK
 * writes is completed in rest-response.ts; the routes of each version are in rest-routes.ts.
 */
export function restRouter(o: RestOptions): express.Router {
  // The SDK builds the call context from the request headers; this is how ours finds its request.
  const states: CallStates = new WeakMap();
  const router = express.Router();
  router.use(restCall(o, states));
  // v0.3's tasks/list (GET /v1/tasks), which the SDK's v0.3 router lacks: legacy-rest-list.ts.
  router.get(/^\/v1\/tasks\/?$/, legacyListRoute(o.handler, states));
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
