import type { IncomingMessage } from 'node:http';

export type ProtocolVersion = '1.0' | '0.3';

/**
 * The protocol version a request asks for: the `A2A-Version` header, else the `A2A-Version` request
 * parameter (spec 3.6.1). Per the spec, a request with neither is a v0.3 request: curl users must
 * send `A2A-Version: 1.0` to speak v1.0.
 */
export function requestedVersion(
  req: IncomingMessage,
): { ok: true; version: ProtocolVersion } | { ok: false; message: string } {
  const raw = req.headers['a2a-version'] ?? fromQuery(req.url);
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!value || value === '0.3' || value === '0.3.0') return { ok: true, version: '0.3' };
  if (value === '1.0' || value === '1.0.0') return { ok: true, version: '1.0' };
  return { ok: false, message: `A2A-Version ${value} is not supported; this agent speaks 1.0 and 0.3` };
}

function fromQuery(url: string | undefined): string | undefined {
  const q = url?.indexOf('?') ?? -1;
  if (!url || q < 0) return undefined;
  return new URLSearchParams(url.slice(q + 1)).get('A2A-Version') ?? undefined;
}
