import { once } from 'node:events';
import type { Request, Response } from 'express';
import type { ArtifactFile } from '../../engine/artifact-reader.js';

/** A single byte range of a file of `size` bytes (RFC 9110 14.1.2), end exclusive. */
export type ByteRange = { start: number; end: number };

/**
 * The range a `Range` header asks for: a range, `undefined` for the whole file (no header, or one
 * this server answers with the whole file: several ranges, another unit), `'unsatisfiable'` (416).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): ByteRange | undefined | 'unsatisfiable' {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return undefined;
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return undefined;
  if (first === '') {
    // A suffix: the last N bytes.
    const n = Number(last);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(size - n, 0), end: size };
  }
  const start = Number(first);
  if (start >= size) return 'unsatisfiable';
  const end = last === '' ? size : Math.min(Number(last) + 1, size);
  if (end <= start) return undefined; // invalid: a server ignores it (RFC 9110 14.2)
  return { start, end };
}

/**
 * Streams an artifact file: a piece at a time, each written once the socket took the last, so the
 * server holds one piece per download however large the file. Sent as an attachment, never rendered
 * on this origin (a skill's HTML must not run beside the inbox), with `Range` support.
 */
export async function sendArtifact(req: Request, res: Response, file: ArtifactFile): Promise<void> {
  const range = parseRange(req.get('Range'), file.size);
  const ascii = file.filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  res.set({
    'Accept-Ranges': 'bytes',
    'Content-Type': file.mediaType,
    'Content-Disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
    'Cache-Control': 'private, no-store',
  });
  if (range === 'unsatisfiable') {
    res.status(416).set('Content-Range', `bytes */${file.size}`).end();
    return;
  }
  const { start, end } = range ?? { start: 0, end: file.size };
  if (range) res.status(206).set('Content-Range', `bytes ${start}-${end - 1}/${file.size}`);
  res.set('Content-Length', String(end - start));
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const closed = new AbortController();
  res.once('close', () => closed.abort());
  try {
    for await (const piece of file.read(start, end)) {
      if (closed.signal.aborted) return;
      if (!res.write(piece)) await once(res, 'drain', { signal: closed.signal }).catch(() => {});
    }
    res.end();
  } catch (err) {
    // Headers are out: the only honest signal left is a cut connection (the length will not match).
    res.destroy(err instanceof Error ? err : undefined);
  }
}
