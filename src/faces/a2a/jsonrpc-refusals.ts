import type { IncomingMessage } from 'node:http';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { ContentTypeNotSupportedError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler } from '@a2a-js/sdk/server';
import type { Principal } from '../../auth/principal.js';
import type { Admission } from '../http/admission.js';
import { type BodyLimits, isJsonContentType } from '../http/body.js';
import { REFUSAL_CODES } from './errors.js';
import { type ProtocolVersion, type requestedVersion, versionNotSupported } from './version.js';

/** What the JSON-RPC endpoint refuses before it reads a request's body (its id: jsonrpc-envelope.ts). */

export type JsonRpcId = string | number | null;
export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** Protocol errors as each version's JSON-RPC error object (the SDK's own mapping). */
export const errorMappers: Record<ProtocolVersion, (err: unknown) => JsonRpcError> = {
  '1.0': (err) => JsonRpcTransportHandler.mapToJSONRPCError(err),
  '0.3': (err) => LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err),
};

/** A call admitted (its caller and protocol version), or the JSON-RPC error that refuses it. */
export type Call =
  | { ok: true; principal: Principal; version: ProtocolVersion }
  | { ok: false; status: number; error: JsonRpcError; headers?: Record<string, string> };

/**
 * What is refused before the body is read: a version we do not speak, a Content-Type we do not
 * read, a caller without valid credentials or over its rate.
 */
export async function admitCall(
  req: IncomingMessage,
  version: ReturnType<typeof requestedVersion>,
  o: BodyLimits & { admit: (req: IncomingMessage) => Promise<Admission> },
): Promise<Call> {
  if (!version.ok)
    return { ok: false, status: 200, error: errorMappers['1.0'](versionNotSupported(version.message)) };
  if (!isJsonContentType(req.headers['content-type'])) {
    const message = `Content-Type ${req.headers['content-type']} is not supported; send application/json`;
    const error = errorMappers[version.version](new ContentTypeNotSupportedError(message));
    return { ok: false, status: 200, error };
  }
  const auth = await o.admit(req);
  if (auth.ok) return { ok: true, principal: auth.principal, version: version.version };
  const { status, kind, message, headers } = auth.refusal;
  return { ok: false, status, error: { code: REFUSAL_CODES[kind].code, message }, headers };
}
