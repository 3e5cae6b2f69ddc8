import type { Request } from 'express';
import type { z } from 'zod';
import { type BodyLimits, isJsonContentType, readJson } from './body.js';
import { Refused } from './route.js';

/**
 * A JSON request body within the limits, or a refusal: a Refused 415, or the BodyRefused (413, 415,
 * 400) that route() answers as bodyProblem does (closing a connection whose body was left unread).
 */
export async function jsonBody(req: Request, limits: BodyLimits): Promise<unknown> {
  if (!isJsonContentType(req.headers['content-type'])) throw new Refused(415, 'Send application/json');
  return readJson(req, limits);
}

/** `value` as `schema` takes it, or a 400 saying `what` to send and the first problem (its field). */
export function parsed<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new Refused(400, `${what}: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
}
