import { toLegacyHTTPError } from '@a2a-js/sdk/compat/v0_3/server';
import type { Request } from 'express';
import { legacyRestEventJson } from './legacy-rest-wire.js';
import { legacyRender } from './legacy-subscribe.js';
import type { RestOptions } from './rest-options.js';
import { restStreamFace, subscribedId } from './rest-subscribe.js';
import type { StreamFace } from './stream-subscriber.js';

/** v0.3's `/v1/tasks/{id}:subscribe`, as the SDK's v0.3 router matches it (its `:taskId` takes a segment). */
const SUBSCRIBE = /^\/v1\/tasks\/([^/]+):subscribe\/?$/;

/**
 * The task id of a v0.3 `GET` or `POST /v1/tasks/{id}:subscribe` served from the engine's
 * subscription (rest-call.ts); undefined for anything else, and for an id the SDK's router words
 * the refusal of (no %-escaped text, or blank).
 */
export function legacySubscribeTarget(req: Request, legacy: boolean): string | undefined {
  if (!legacy || (req.method !== 'GET' && req.method !== 'POST')) return undefined;
  return subscribedId(SUBSCRIBE, req.path);
}

/**
 * What v0.3 REST subscriptions are served with, as the SDK's v0.3 router wrote them: each event
 * the v0.3 proto's JSON, bare (legacy-rest-wire.ts); a refusal with its HTTP status and the v0.3
 * error body (and our completions of them, rest-response.ts); a failure mid-stream as its
 * `event: error`.
 */
export function legacyRestStreams(o: RestOptions): StreamFace {
  return restStreamFace(o, {
    legacy: true,
    errorBody: (cause) => toLegacyHTTPError(cause),
    render: legacyRender(o.engine, legacyRestEventJson),
  });
}
