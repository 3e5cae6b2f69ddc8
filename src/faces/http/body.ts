import type { IncomingMessage } from 'node:http';

/** The body is larger than the configured limit: answered with 413. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`Request body exceeds the limit of ${limit} bytes`);
  }
}

/**
 * Reads a request body as text, refusing (before reading, when Content-Length says so) anything
 * over `limit` bytes. A refused body is drained in the background so the connection stays usable.
 */
export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new BodyTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new BodyTooLarge(limit);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** True when the Content-Type is absent or a JSON type (`application/json`, `application/a2a+json`). */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return true;
  const type = value.split(';', 1)[0]?.trim().toLowerCase();
  return type === 'application/json' || type === 'application/a2a+json';
}
