import type { IncomingMessage } from 'node:http';
import type { Authenticator } from '../../auth/authenticator.js';
import { ownerKey, type Principal } from '../../auth/principal.js';
import type { RateLimiter } from '../../auth/rate-limiter.js';
import { TASKHANDLE_ERROR_CODE } from './errors.js';

/** Why a request is turned away before it reaches the protocol: its HTTP status, headers and error. */
export interface Refusal {
  status: 401 | 429;
  headers: Record<string, string>;
  /** JSON-RPC error code (also the v0.3 REST body's code). */
  code: number;
  /** google.rpc status name of the v1.0 REST body. */
  restStatus: 'UNAUTHENTICATED' | 'RESOURCE_EXHAUSTED';
  message: string;
}

export type Admission = { ok: true; principal: Principal } | { ok: false; refusal: Refusal };

/**
 * Who may send this request: an authenticated principal (401 otherwise) within its request rate
 * (429 with Retry-After otherwise). Anonymous callers are one principal, so their rate is counted
 * per client address.
 */
export function admission(
  authenticator: Authenticator,
  limiter?: RateLimiter,
): (req: IncomingMessage) => Promise<Admission> {
  return async (req): Promise<Admission> => {
    const auth = await authenticator.authenticate(req.headers);
    if (!auth.ok) {
      return {
        ok: false,
        refusal: {
          status: 401,
          headers: { 'WWW-Authenticate': auth.challenge },
          code: TASKHANDLE_ERROR_CODE.UNAUTHENTICATED,
          restStatus: 'UNAUTHENTICATED',
          message: auth.message,
        },
      };
    }
    const { principal } = auth;
    const key = principal.via === 'anonymous' ? `ip:${req.socket.remoteAddress}` : ownerKey(principal);
    const waitMs = limiter?.take(key) ?? 0;
    if (waitMs === 0) return { ok: true, principal };
    const retryAfterS = Math.max(1, Math.ceil(waitMs / 1000));
    return {
      ok: false,
      refusal: {
        status: 429,
        headers: { 'Retry-After': String(retryAfterS) },
        code: TASKHANDLE_ERROR_CODE.RATE_LIMITED,
        restStatus: 'RESOURCE_EXHAUSTED',
        message: `Rate limited: too many requests; retry after ${retryAfterS} s`,
      },
    };
  };
}
