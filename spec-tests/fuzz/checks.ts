import { METHODS } from 'node:http';
import type { FuzzRequest } from './requests.js';

/** A response as the fuzz client read it (an event stream: its first chunk only). */
export interface FuzzResponse {
  status: number;
  contentType: string;
  text: string;
  /** Only the first part of a long body was read: its shape is not checked. */
  truncated?: boolean;
}

/** What must never reach a caller: JS error messages, stack frames, the database's words. */
const LEAKS: RegExp[] = [
  /at .*\(.*:\d+:\d+\)/,
  /\.(js|ts|cjs|mjs):\d+/,
  /Cannot read propert/,
  /is not a function/,
  /is not iterable/,
  /Maximum call stack/,
  /SQLITE/i,
  /\b(TypeError|RangeError|ReferenceError|SyntaxError|URIError)\b/,
  /\bundefined\b/,
  /\[object Object\]/,
  /node_modules/,
  /Unexpected token/,
  /Failed to decode param/,
];

/** The face that answers a request: each has its documented error shape (README, docs/http-jobs.md). */
export type Face = 'jsonrpc' | 'mcp' | 'rest' | 'rest-v0.3' | 'problem';

export function faceOf(r: FuzzRequest): Face {
  // A method Node's parser does not know never reaches a face: the server answers it itself.
  if (!METHODS.includes(r.method)) return 'problem';
  if (r.method === 'POST' && (r.path === '/' || r.path.startsWith('/?'))) return 'jsonrpc';
  // /mcp answers every method itself, each error as JSON-RPC (docs/mcp.md).
  if (/^\/mcp\/?(\?|$)/.test(r.path)) return 'mcp';
  const rest = /^\/rest(?=\/|\?|$)(.*)$/.exec(r.path);
  if (!rest) return 'problem';
  const path = rest[1] ?? '';
  if (!path.startsWith('/v1/')) return 'rest';
  // As the server decides: /v1/... is v0.3 unless asked as v1.0 (then "v1" is a tenant).
  const header = Object.entries(r.headers).find(([k]) => k.toLowerCase() === 'a2a-version')?.[1];
  const asked = (header || new URLSearchParams(path.split('?')[1] ?? '').get('A2A-Version') || '').trim();
  // Major.Minor with an optional patch number, as docs/protocol-versions.md says.
  const v = /^(\d{1,4})\.(\d{1,4})(?:\.\d{1,4})?$/.exec(asked);
  return v && Number(v[1]) === 1 && Number(v[2]) === 0 ? 'rest' : 'rest-v0.3';
}

/** Why a response breaks the rules; `undefined` when it keeps them. */
export function violation(r: FuzzRequest, res: FuzzResponse): string | undefined {
  if (res.status >= 500) return `HTTP ${res.status}`;
  const leak = LEAKS.find((re) => re.test(res.text));
  if (leak) return `the body shows an internal message (${leak})`;
  if (res.truncated) return undefined;
  // A range past the end of a download: documented as a bare 416 with its Content-Range.
  if (res.status === 416 && res.text === '') return undefined;
  if (res.status < 400 || r.method === 'HEAD') {
    const rpc = ['jsonrpc', 'mcp'].includes(faceOf(r)) && r.method !== 'HEAD';
    return rpc && res.contentType.startsWith('application/json') ? jsonRpcShape(res.text) : undefined;
  }
  // Headers (the path with them) over Node's limit are answered by the server before any face.
  const face = res.status === 431 ? 'problem' : faceOf(r);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return `a ${res.status} whose body is not JSON`;
  }
  switch (face) {
    case 'jsonrpc':
    case 'mcp':
      return jsonRpcShape(res.text);
    case 'rest': {
      const e = (body as { error?: { code?: unknown; status?: unknown; message?: unknown } }).error;
      if (e?.code !== res.status || typeof e.status !== 'string' || typeof e.message !== 'string')
        return 'a REST v1.0 error that is not {error: {code (the HTTP status), status, message}}';
      return undefined;
    }
    case 'rest-v0.3': {
      const e = body as { code?: unknown; message?: unknown };
      if (!Number.isInteger(e.code) || typeof e.message !== 'string')
        return 'a REST v0.3 error that is not {code, message}';
      return undefined;
    }
    case 'problem': {
      const e = body as { type?: unknown; title?: unknown; status?: unknown; detail?: unknown };
      if (!res.contentType.startsWith('application/problem+json')) return 'an error that is not problem+json';
      if (e.status !== res.status || typeof e.title !== 'string' || typeof e.detail !== 'string')
        return 'a problem document without its status, title and detail';
      return undefined;
    }
  }
}

/** A JSON-RPC response: `jsonrpc`, an id, and a result or an error object {code, message}. */
function jsonRpcShape(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'a JSON-RPC answer that is not JSON';
  }
  const body = parsed as {
    jsonrpc?: unknown;
    result?: unknown;
    error?: { code?: unknown; message?: unknown };
  };
  if (body.jsonrpc !== '2.0') return 'a JSON-RPC answer without jsonrpc "2.0"';
  if (body.error === undefined)
    return 'result' in body ? undefined : 'a JSON-RPC answer with neither result nor error';
  if (!Number.isInteger(body.error.code) || typeof body.error.message !== 'string')
    return 'a JSON-RPC error that is not {code, message}';
  return undefined;
}
