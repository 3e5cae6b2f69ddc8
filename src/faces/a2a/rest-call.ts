import type { IncomingHttpHeaders } from 'node:http';
import { toLegacyHTTPError } from '@a2a-js/sdk/compat/v0_3/server';
import { toRestErrorBody } from '@a2a-js/sdk/errors';
import type { NextFunction, Request, Response } from 'express';
import { pollWaitMs } from '../generation.js';
import { BodyRefused } from '../http/body.js';
import { type CallState, newCallState } from './call-state.js';
import { REFUSAL_CODES } from './errors.js';
import { generationAsk } from './generation-params.js';
import { legacyPushConfigBody } from './legacy-push-body.js';
import { legacyRestStreams, legacySubscribeTarget } from './legacy-rest-subscribe.js';
import { bodyProblem, restBody, restParams } from './rest-body.js';
import type { RestOptions } from './rest-options.js';
import { noSuchEndpoint, refuse } from './rest-refusals.js';
import { withHold, withOwnWords, withRetryAfter, withSseIds } from './rest-response.js';
import { isLegacy, isLegacyRoute, restMethodOf, SEND } from './rest-routes.js';
import { serveRestSendStream } from './rest-send-stream.js';
import { restStreams, restSubscribeTarget, serveRestSubscribe } from './rest-subscribe.js';
import { requestedVersion, versionNotSupported } from './version.js';

/** The call state of each request, by its headers: the SDK builds its call context from those. */
export type CallStates = WeakMap<IncomingHttpHeaders, CallState>;

/**
 * Every REST request, before the SDK's router: admitted, its call state made (and kept in
 * `states`), what the SDK writes completed (rest-response.ts), its body read and checked. A
 * subscription is served here, from the engine (rest-subscribe.ts; v0.3's, legacy-rest-subscribe.ts),
 * once its body is read, and so is a v1.0 streaming send once its body is checked
 * (rest-send-stream.ts): neither holds a call state for its lifetime. What the SDK writes is
 * completed only after the body's checks, whose refusals (400, 413, 415) it would leave as they are.
 */
export const restCall = (o: RestOptions, states: CallStates) => {
  const streams = restStreams(o);
  const legacyStreams = legacyRestStreams(o);
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const legacy = isLegacy(req);
    const principal = await admitted(o, req, res, legacy);
    if (!principal) return;
    const subscribeTo = restSubscribeTarget(req, legacy) ?? legacySubscribeTarget(req, legacy);
    if (subscribeTo !== undefined) {
      // Its body is read (within the limits) and dropped: the SDK's route reads none of it.
      const face = legacy ? legacyStreams : streams;
      if (await readBody(o, req, res, legacy)) serveRestSubscribe(face, req, res, principal, subscribeTo);
      return;
    }
    const state = newCallState(req, res, {
      principal,
      transport: 'rest',
      version: legacy ? '0.3' : '1.0',
      shutdown: o.shutdown,
    });
    if (!(await checkedBody(o, req, res, state, legacy))) return;
    // A v1.0 streaming send is served from the engine too (rest-send-stream.ts): its stream holds
    // neither the call state nor what completes the SDK's responses.
    if (await serveRestSendStream(o, streams, req, res, state)) return;
    states.set(req.headers, state);
    withSseIds(res, state, o.keepAliveMs);
    withRetryAfter(res);
    withOwnWords(res, legacy, o.logger);
    // A blocking send that waits keeps its answer alive (hold.ts); the SDK's v0.3 router answers 201.
    if (req.method === 'POST' && SEND.test(req.path)) withHold(res, state, o.keepAliveMs, legacy ? 201 : 200);
    next();
  };
};

/** The caller, admitted for a route of the version it asked for; or undefined once `res` has the refusal. */
async function admitted(o: RestOptions, req: Request, res: Response, legacy: boolean) {
  // The path picks the version; a header that names one we do not speak is still refused (spec 3.6.2).
  const asked = requestedVersion(req);
  if (!asked.ok) {
    const error = versionNotSupported(asked.message);
    res.status(400).json(legacy ? toLegacyHTTPError(error) : toRestErrorBody(error, 400));
    return undefined;
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
    return undefined;
  }
  // The SDK passes a v0.3 request its v0.3 routes do not serve on to its v1.0 routes (as tenant
  // "v1"), which answer in v1.0's shape: a v0.3 caller gets its own 404 instead.
  if (legacy && !isLegacyRoute(req.method, req.path)) {
    noSuchEndpoint(res, true);
    return undefined;
  }
  return auth.principal;
}

/**
 * The body read within the limits and set on `req` for the SDK, its fields checked, the
 * generation fields and `Prefer: wait` taken into `state`: true, or false once `res` has the refusal.
 */
async function checkedBody(
  o: RestOptions,
  req: Request,
  res: Response,
  state: CallState,
  legacy: boolean,
): Promise<boolean> {
  if (!(await readBody(o, req, res, legacy))) return false;
  const problem = bodyFieldsProblem(req, legacy) ?? takeGeneration(req, state);
  if (problem !== undefined) {
    refuse(res, legacy, 400, `Invalid params: ${problem}`);
    return false;
  }
  state.pollWaitMs = pollWaitMs(req.headers.prefer);
  return true;
}

/** The body read within the limits and set on `req`: true, or false once `res` has the refusal. */
async function readBody(o: RestOptions, req: Request, res: Response, legacy: boolean): Promise<boolean> {
  try {
    req.body = await restBody(req, o);
    return true;
  } catch (err) {
    if (!(err instanceof BodyRefused)) throw err;
    // A body not read to its end (too large, compressed) leaves the connection in no known state.
    if (err.problem.kind === 'too-large' || err.problem.kind === 'encoding')
      res.setHeader('Connection', 'close');
    refuse(res, legacy, err.status, err.message);
    return false;
  }
}

/** What is wrong with a POST's fields (a v0.3 push config rewritten to v1.0's first), or undefined. */
function bodyFieldsProblem(req: Request, legacy: boolean): string | undefined {
  const push = legacy && req.method === 'POST' ? legacyPushConfigBody(req.path, req.body) : undefined;
  if (push && 'problem' in push) return push.problem;
  if (push) req.body = push.body;
  // A POST's JSON body (others have none the SDK reads, or a Content-Type it refuses itself).
  return (
    (req.method === 'POST' && req.body !== undefined && bodyProblem(req.path, legacy, req.body)) || undefined
  );
}

/** The generation fields the call carries (generation-params.ts), taken into `state`; or what is wrong with them. */
function takeGeneration(req: Request, state: CallState): string | undefined {
  const generation = generationAsk(restMethodOf(req.method, req.path), restParams(req));
  if ('problem' in generation) return generation.problem;
  state.generation = generation.ask;
  return undefined;
}
