import type { IncomingMessage } from 'node:http';
import { jsonDepthExceeds } from './json-depth.js';

/** Why a request body is refused before any of it reaches a handler: an HTTP status and our words. */
export type BodyProblem =
  | { kind: 'too-large'; status: 413; message: string }
  | { kind: 'encoding'; status: 415; message: string }
  | { kind: 'not-json'; status: 400; message: string }
  | { kind: 'too-deep'; status: 400; message: string }
  /** The caller went away before its body ended: whatever is answered reaches nobody. */
  | { kind: 'gone'; status: 400; message: string };

/** A body refused: each face answers it in its own error shape, with this status and message. */
export class BodyRefused extends Error {
  constructor(readonly problem: BodyProblem) {
    super(problem.message);
  }
  get status(): number {
    return this.problem.status;
  }
}

/** The limits every face reads bodies with (MAX_BODY_BYTES, MAX_JSON_DEPTH). */
export interface BodyLimits {
  maxBodyBytes: number;
  maxJsonDepth: number;
}

export const tooLarge = (limit: number): BodyRefused =>
  new BodyRefused({
    kind: 'too-large',
    status: 413,
    message: `Request body exceeds the limit of ${limit} bytes`,
  });

/**
 * The Content-Encoding a body came with, when it is one we do not read: we take bodies uncompressed
 * only (a compressed body could inflate past MAX_BODY_BYTES after the check). `undefined`: readable.
 */
export function unreadableEncoding(req: IncomingMessage): BodyRefused | undefined {
  const raw = req.headers['content-encoding'];
  if (raw === undefined) return undefined;
  const codings = raw
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return undefined;
  return new BodyRefused({
    kind: 'encoding',
    status: 415,
    message: `Content-Encoding ${JSON.stringify(raw.slice(0, 40))} is not supported; send the body uncompressed`,
  });
}

/**
 * Reads a request body as text, refusing (before reading, when Content-Length says so) anything
 * over `limit` bytes, and any Content-Encoding but identity. A refused body is drained in the
 * background so the connection stays usable.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const encoding = unreadableEncoding(req);
  const declared = Number(req.headers['content-length']);
  if (encoding || (Number.isFinite(declared) && declared > limit)) {
    req.resume();
    throw encoding ?? tooLarge(limit);
  }
  return readText(req, limit);
}

/**
 * The body's bytes as text, with listeners of its own that are all gone once it ends: a stream
 * (SubscribeToTask) keeps its request for hours, and neither `for await` (five listeners left on it)
 * nor `req.iterator()` (an async iterator and its promises per request) is needed here.
 */
function readText(req: IncomingMessage, limit: number): Promise<string> {
  if (req.destroyed) return Promise.reject(gone());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (err?: unknown) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks, size).toString('utf8'));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      settle(tooLarge(limit));
      req.resume();
    };
    const onEnd = () => settle();
    // An error ("aborted") or a close before its end: the caller went away mid-body. A refusal, not
    // a failure of ours: logged as none, whatever a caller does to its own connections.
    const onGone = () => settle(gone());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

const gone = (): BodyRefused =>
  new BodyRefused({ kind: 'gone', status: 400, message: 'The request was closed before its body ended' });

/**
 * Parses JSON text, refusing bodies nested deeper than `maxDepth` (objects and arrays) before they
 * are parsed: every later step (validation, storing, hashing, serializing) may then recurse freely.
 */
export function parseJson(text: string, maxDepth: number): unknown {
  if (jsonDepthExceeds(text, maxDepth)) {
    throw new BodyRefused({
      kind: 'too-deep',
      status: 400,
      message: `The body nests deeper than ${maxDepth} levels (MAX_JSON_DEPTH)`,
    });
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyRefused({ kind: 'not-json', status: 400, message: 'The body is not valid JSON' });
  }
}

/** {@link readBody} then {@link parseJson}: the body as JSON, within the limits. */
export async function readJson(req: IncomingMessage, limits: BodyLimits): Promise<unknown> {
  return parseJson(await readBody(req, limits.maxBodyBytes), limits.maxJsonDepth);
}

/** True when a request comes with a body (even an empty one), as HTTP/1.1 frames it. */
export const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;

/** True when the Content-Type is absent or a JSON type (`application/json`, `application/a2a+json`). */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return true;
  const type = value.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json' || type === 'application/a2a+json';
}
