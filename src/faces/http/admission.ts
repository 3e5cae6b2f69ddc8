import type { IncomingHttpHeaders } from 'node:http';
import type { Authenticator, AuthFailure } from '../../auth/authenticator.js';
import { ownerKey, type Principal } from '../../auth/principal.js';
import type { RateLimiter } from '../../auth/rate-limiter.js';
import type { BodyLimits } from './body.js';
import { foreignHost, type HostRule } from './host-guard.js';

/**
 * Why a request is turned away before it reaches a protocol: its kind, HTTP status, headers and
 * message. Each face words it in its own shape (the A2A face maps `kind` to its error codes).
 */
export interface Refusal {
  kind: 'unauthenticated' | 'rate-limited' | 'foreign-host';
  status: 401 | 403 | 429;
  headers: Record<string, string>;
  message: string;
  /** Why credentials were refused (`unauthenticated` only). */
  auth?: AuthFailure;
}

export type Admission = { ok: true; principal: Principal } | { ok: false; refusal: Refusal };

/** What admission reads of a request: its headers (an HTTP request's, or a gRPC call's metadata) and peer. */
export interface Caller {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string };
}

/**
 * Who may send this request: an authenticated principal (401 otherwise) within its request rate
 * (429 with Retry-After otherwise). Anonymous callers are one principal, so their rate is counted
 * per client address. On a server that serves anonymous callers, a request must name the server
 * (`hosts`, see host-guard.ts; 403 otherwise): with credentials required, a browser has none to lend
 * a rebinding page (the faces read headers, never cookies). `refused` hears every refusal (metrics).
 */
export function admission(
  authenticator: Authenticator,
  limiter?: RateLimiter,
  refused: (refusal: Refusal) => void = () => {},
  hosts?: HostRule,
): (req: Caller) => Promise<Admission> {
  const hostRule = authenticator.anonymous ? hosts : undefined;
  const refuse = (refusal: Refusal): Admission => {
    refused(refusal);
    return { ok: false, refusal };
  };
  return async (req): Promise<Admission> => {
    const foreign = hostRule && foreignHost(req.headers, hostRule);
    if (foreign !== undefined)
      return refuse({ kind: 'foreign-host', status: 403, headers: {}, message: foreign });
    const auth = await authenticator.authenticate(req.headers);
    if (!auth.ok) {
      return refuse({
        kind: 'unauthenticated',
        status: 401,
        headers: { 'WWW-Authenticate': auth.challenge },
        message: auth.message,
        auth: auth.kind,
      });
    }
    const { principal } = auth;
    const key = principal.via === 'anonymous' ? `ip:${req.socket.remoteAddress}` : ownerKey(principal);
    const waitMs = limiter?.take(key) ?? 0;
    return waitMs === 0 ? { ok: true, principal } : refuse(rateLimited(waitMs));
  };
}

/** 429 with Retry-After: the caller may send again in `waitMs` (whole seconds, at least 1). */
function rateLimited(waitMs: number): Refusal {
  const retryAfterS = Math.max(1, Math.ceil(waitMs / 1000));
  return {
    kind: 'rate-limited',
    status: 429,
    headers: { 'Retry-After': String(retryAfterS) },
    message: `Rate limited: too many requests; retry after ${retryAfterS} s`,
  };
}

/** What every HTTP face is built with: who may call, body limits, streams' keep-alive and shutdown. */
export interface FaceOptions extends BodyLimits {
  /** Who is calling, and whether they may now (401 without valid credentials, 429 over their rate). */
  admit: (req: Caller) => Promise<Admission>;
  /** SSE keep-alive comment interval. */
  keepAliveMs: number;
  /** Aborted at shutdown: waits answer with the task as it stands, streams end. */
  shutdown: AbortSignal;
}
