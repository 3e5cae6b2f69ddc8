import { BodyRefused } from './body.js';

/** An error a request caused (a 4xx), as the status to answer with and our own words for it. */
export interface ClientError {
  status: number;
  message: string;
}

/** Our words for the errors the framework and its body parser raise (their `type`, else the status). */
const BY_TYPE: Record<string, string> = {
  'entity.too.large': 'The request body is too large',
  'entity.parse.failed': 'The body is not valid JSON',
  'encoding.unsupported': 'This Content-Encoding is not supported; send the body uncompressed',
  'charset.unsupported': 'This charset is not supported; send the body as UTF-8',
  'request.aborted': 'The request body ended early',
  'request.size.invalid': 'The request body does not match its Content-Length',
};
const BY_STATUS: Record<number, string> = {
  400: 'The request could not be read; check its path, headers and body',
  404: 'Not found',
  405: 'This method is not allowed here',
  413: 'The request body is too large',
  415: 'The request body is in a form this server does not read',
};

/**
 * The 4xx an error carries (`status` or `statusCode`, as the framework, its router and body parser
 * set them), with our message: never the error's own, which names code and libraries. `undefined`:
 * not a caller's error but an internal failure (500, logged, nothing of it told).
 * @example clientErrorOf(uriError) // { status: 400, message: 'The path holds a malformed %-escape ...' }
 */
export function clientErrorOf(err: unknown): ClientError | undefined {
  if (err instanceof BodyRefused) return { status: err.status, message: err.message };
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { status?: unknown; statusCode?: unknown; type?: unknown };
  const status = typeof e.status === 'number' ? e.status : e.statusCode;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 499)
    return undefined;
  if (err instanceof URIError) {
    return { status, message: 'The path holds a malformed %-escape; percent-encode it as UTF-8' };
  }
  const message =
    (typeof e.type === 'string' ? BY_TYPE[e.type] : undefined) ??
    BY_STATUS[status] ??
    'The request was refused; check its path, headers and body';
  return { status, message };
}
