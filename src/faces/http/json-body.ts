import type { Request } from 'express';
import type { z } from 'zod';
import { type BodyLimits, BodyRefused, isJsonContentType, readJson } from './body.js';
import { Refused } from './route.js';

/** A JSON request body within the limits, or a refusal (415, 413, 400) in problem form. */
export async function jsonBody(req: Request, limits: BodyLimits): Promise<unknown> {
  if (!isJsonContentType(req.headers['content-type'])) throw new Refused(415, 'Send application/json');
  try {
    return await readJson(req, limits);
  } catch (err) {
    if (err instanceof BodyRefused) throw new Refused(err.status, err.message);
    throw err;
  }
}

/** `value` as `schema` takes it, or a 400 saying `what` to send and the first problem (its field). */
export function parsed<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new Refused(400, `${what}: ${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
}
