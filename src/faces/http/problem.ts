import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../../auth/principal.js';
import type { EngineErrorCode } from '../../engine/errors.js';
import type { Admission } from './admission.js';
import { BodyRefused, hasBody, readBody } from './body.js';

/** The HTTP status of each engine error on the plain-HTTP faces (jobs, inbox). */
export const STATUS_OF: Record<EngineErrorCode, number> = {
  'task-not-found': 404,
  'task-not-cancelable': 409,
  'unsupported-operation': 409,
  'invalid-params': 400,
  'unknown-skill': 400,
  'shutting-down': 503,
  'too-many-tasks': 429,
  'too-many-streams': 429,
  forbidden: 403,
  // An If-Match that no longer matches: RFC 9110 section 13.1.1 (the jobs face's conditional requests).
  'task-generation-mismatch': 412,
};

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * When a slot (MAX_ACTIVE_TASKS, MAX_STREAMS, a worker's waiting claim) frees is unknown: a caller
 * refused for one is told to look again after this many seconds, the Retry-After a 429 calls for.
 */
export const SLOT_RETRY_AFTER_S = 5;

/** A 429 without a Retry-After of its own (a rate limit says when) gets {@link SLOT_RETRY_AFTER_S}. */
export function withSlotRetryAfter(res: ServerResponse, status: number): void {
  if (status === 429 && !res.hasHeader('Retry-After'))
    res.setHeader('Retry-After', String(SLOT_RETRY_AFTER_S));
}

/** An RFC 9457 problem response; `extra` adds extension members (e.g. the job's status). */
export function problem(
  res: Response,
  status: number,
  detail: string,
  extra: Record<string, unknown> = {},
): void {
  withSlotRetryAfter(res, status);
  res
    .status(status)
    .type('application/problem+json')
    .send(
      JSON.stringify({ type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...extra }),
    );
}

/**
 * Express middleware: admits the caller (401/429 as problem documents otherwise) and keeps its
 * principal for the route, which reads it with {@link principalOf}.
 */
export function admitted(admit: (req: IncomingMessage) => Promise<Admission>) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    res.set('Cache-Control', 'no-store');
    const auth = await admit(req);
    if (!auth.ok) {
      const { status, headers, message } = auth.refusal;
      problem(res.set(headers), status, message);
      return;
    }
    res.locals.principal = auth.principal;
    next();
  };
}

/**
 * Express middleware: a body on a request that takes none (GET, DELETE, ...) is read within the
 * limit and dropped, so that it is refused as a POST's would be: 413 over MAX_BODY_BYTES, 415
 * compressed. POST handlers read their own bodies.
 */
export function bodyless(maxBodyBytes: number) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.method === 'POST' || !hasBody(req)) return next();
    try {
      await readBody(req, maxBodyBytes);
    } catch (err) {
      if (!(err instanceof BodyRefused)) throw err;
      bodyProblem(res, err);
      return;
    }
    next();
  };
}

/** A request body refused (too large, compressed, not JSON, too deep) as a problem document. */
export function bodyProblem(res: Response, err: BodyRefused): void {
  const unread = err.problem.kind === 'too-large' || err.problem.kind === 'encoding';
  problem(unread ? res.set('Connection', 'close') : res, err.status, err.message);
}

export const principalOf = (res: Response): Principal => res.locals.principal as Principal;
