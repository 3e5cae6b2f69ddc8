import { restStatusFor, toRestErrorBody } from '@a2a-js/sdk/errors';
import type { Request, Response } from 'express';
import { ownerKey, type Principal } from '../../auth/principal.js';
import { isJsonContentType } from '../http/body.js';
import { openUntil } from '../http/open-subscriptions.js';
import { parseLastEventId } from './call-state.js';
import { toProtocolError } from './errors.js';
import type { RestOptions } from './rest-options.js';
import { withOwnWords, withRetryAfter } from './rest-response.js';
import { type StreamFace, serveStream } from './stream-subscriber.js';

/** `/tasks/{id}:subscribe`, no tenant: what the SDK's router matches first (its `:taskId` takes a segment). */
const SUBSCRIBE = /^\/tasks\/([^/]+):subscribe\/?$/;

/** The SDK's REST responses' Content-Type, which its refusals carry. */
const A2A_CONTENT_TYPE = 'application/a2a+json';

/**
 * The task id of a v1.0 `GET` or `POST /tasks/{id}:subscribe` this path serves; undefined for
 * anything else, and for what the SDK's router words the refusal of (a Content-Type it refuses, an
 * id that is no %-escaped text or is blank) or serves otherwise (a tenant, a path in other case).
 */
export function restSubscribeTarget(req: Request, legacy: boolean): string | undefined {
  if (legacy || (req.method !== 'GET' && req.method !== 'POST')) return undefined;
  if (!isJsonContentType(req.headers['content-type'])) return undefined;
  return subscribedId(SUBSCRIBE, req.path);
}

/**
 * The task id a subscribe path names (`pattern`'s first group, %-decoded); undefined when it names
 * none, or one the SDK's routers word the refusal of (no %-escaped text, or blank).
 */
export function subscribedId(pattern: RegExp, path: string): string | undefined {
  const raw = pattern.exec(path)?.[1];
  if (raw === undefined) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  return id.trim() ? id : undefined;
}

/**
 * What REST subscriptions are served with: bare StreamResponse events; a refusal with the status
 * and google.rpc.Status body the SDK's router gives it (and our completions of them, rest-response.ts);
 * a failure mid-stream as its `event: error`.
 */
export function restStreams(o: RestOptions): StreamFace {
  return restStreamFace(o, {
    legacy: false,
    contentType: A2A_CONTENT_TYPE,
    errorBody: (cause, status) => toRestErrorBody(cause, status),
  });
}

/** What one version's REST streams differ in: the error body (and its media type) and the events' JSON. */
export interface RestStreamWire {
  legacy: boolean;
  /** Set on a refusal (else Express's JSON type). */
  contentType?: string;
  errorBody(cause: unknown, status: number): unknown;
  render?: StreamFace['render'];
}

/**
 * A REST version's stream face: bare events; a refusal with the status the SDK's router gives it
 * and the version's error body (and our completions of them, rest-response.ts); a failure
 * mid-stream as its `event: error`.
 */
export function restStreamFace(o: RestOptions, wire: RestStreamWire): StreamFace {
  const body = (err: unknown) => {
    const cause = toProtocolError(err, 'rest', (e) => o.logger.error({ err: e }, 'internal error'));
    const status = restStatusFor(cause);
    return { status, body: wire.errorBody(cause, status) };
  };
  return {
    engine: o.engine,
    keepAliveMs: o.keepAliveMs,
    open: openUntil(o.shutdown),
    frame: (json) => json,
    refuse: (res, _id, err) => {
      const refusal = body(err);
      const r = res as Response;
      // Only now: a stream that opens holds none of them for its lifetime.
      withRetryAfter(r);
      withOwnWords(r, wire.legacy, o.logger);
      if (wire.contentType) r.setHeader('Content-Type', wire.contentType);
      r.status(refusal.status).json(refusal.body);
    },
    failure: (_id, err) => ({ json: JSON.stringify(body(err).body), event: 'error' }),
    ...(wire.render ? { render: wire.render } : {}),
  };
}

/** A v1.0 REST subscription of `principal` to `taskId`, served from the engine's subscription. */
export function serveRestSubscribe(
  face: StreamFace,
  req: Request,
  res: Response,
  principal: Principal,
  taskId: string,
): void {
  serveStream(face, res, ownerKey(principal), taskId, parseLastEventId(req.headers['last-event-id']));
}
