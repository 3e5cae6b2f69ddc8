import type { Request, Response } from 'express';
import type { Principal } from '../../auth/principal.js';
import { CODE, replyError } from './jsonrpc.js';
import type { McpOptions } from './options.js';

/**
 * The admitted caller, or undefined when refused (401 with the challenge, which names the
 * protected-resource metadata when JWTs are on; 429 with Retry-After): answered here, with a
 * JSON-RPC error body.
 */
export async function admitted(o: McpOptions, req: Request, res: Response): Promise<Principal | undefined> {
  res.set('Cache-Control', 'no-store');
  const auth = await o.admit(req);
  if (auth.ok) return auth.principal;
  const { status, headers, message } = auth.refusal;
  const metadata = o.resourceMetadataUrl?.();
  const challenge = headers['WWW-Authenticate'];
  if (challenge && metadata) headers['WWW-Authenticate'] = `${challenge}, resource_metadata="${metadata}"`;
  res
    .status(status)
    .set(headers)
    .json(replyError(null, CODE.invalidRequest, message));
  return undefined;
}
