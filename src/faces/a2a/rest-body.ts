import type { Request } from 'express';
import {
  type BodyLimits,
  BodyRefused,
  hasBody,
  isJsonContentType,
  parseJson,
  readBody,
} from '../http/body.js';
import { foreignMessage } from './foreign-body.js';
import { problemOf, REST_BODIES } from './params.js';
import { BODY_ROUTES } from './rest-routes.js';

/**
 * What is wrong with a POST's body on a route whose body the SDK decodes: a message in another
 * version's or binding's shape (foreign-body.ts), else the first field of the wrong type.
 */
export function bodyProblem(path: string, legacy: boolean, body: unknown): string | undefined {
  const version = legacy ? '0.3' : '1.0';
  const kind = BODY_ROUTES[version].find(([route]) => route.test(path))?.[1];
  if (!kind) return undefined;
  const foreign = kind === 'send' ? foreignMessage({ transport: 'rest', version }, body) : undefined;
  return foreign ?? problemOf(REST_BODIES[version][kind], body);
}

/**
 * A request's body, read within the limits whatever the method (a GET with a body over the limit
 * is a 413, as a POST is). A JSON POST's body must be an object: every v1.0 request is one, and the
 * SDK sets the tenant of a tenant-prefixed path on it. v0.3 clients send `null` or nothing for no
 * parameters: that is `{}`. Other requests' bodies are read and dropped.
 */
export async function restBody(req: Request, limits: BodyLimits): Promise<unknown> {
  if (!hasBody(req)) return req.method === 'POST' ? {} : undefined;
  const json = req.method === 'POST' && isJsonContentType(req.headers['content-type']);
  // A body the SDK refuses for its Content-Type is left to it, unread.
  if (!json && !isJsonContentType(req.headers['content-type'])) return undefined;
  const text = await readBody(req, limits.maxBodyBytes);
  if (!json) return undefined;
  if (text.trim() === '') return {};
  const body = parseJson(text, limits.maxJsonDepth);
  if (body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new BodyRefused({ kind: 'not-json', status: 400, message: 'The body must be a JSON object' });
  }
  return body;
}

/** Where a REST call carries its fields: the query of a GET, the JSON body of a POST. */
export const restParams = (req: Request): unknown => (req.method === 'GET' ? req.query : req.body);
