import type { Request } from 'express';
import type { z } from 'zod';
import { type BodyLimits, isJsonContentType, readJson } from './body.js';
import { Refused } from './route.js';

/**
 * A JSON request body within the limits, or a refusal: a Refused 415, or the BodyRefused (413, 415,
 * 400) that route() answers as bodyProblem does (closing a connection whose body was left unread).
 * A body without Content-Type is taken as JSON: API clients (curl -d) often send none.
 */
export async function jsonBody(req: Request, limits: BodyLimits): Promise<unknown> {
  if (!isJsonContentType(req.headers['content-type'])) throw new Refused(415, 'Send application/json');
  return readJson(req, limits);
}

/**
 * The JSON body of an action a browser page sends (the console's, the inbox's): as {@link jsonBody},
 * but its JSON Content-Type must be there. A POST with none (a body in a Blob without a type) or
 * with a form's or text's is one a page of another site may send without asking (no CORS
 * preflight); a JSON type makes the browser ask first, and these routes allow no other site (they
 * send no CORS headers).
 */
export async function preflightedJsonBody(req: Request, limits: BodyLimits): Promise<unknown> {
  const type = req.headers['content-type'];
  if (!type || !isJsonContentType(type)) {
    const sent = type ? `Content-Type ${JSON.stringify(type.slice(0, 100))}` : 'no Content-Type';
    throw new Refused(415, `The request has ${sent}; send its JSON body with Content-Type: application/json`);
  }
  return readJson(req, limits);
}

/** `value` as `schema` takes it, or a 400 saying `what` to send and the first problem (its field). */
export function parsed<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new Refused(400, `${what}: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
}
