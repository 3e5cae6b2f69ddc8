import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/**
 * Keeps a blocking send's answer alive while it waits (the send's own JSON comes at the end).
 *
 * JSON-RPC and HTTP+JSON answer with one JSON body, which has no comment syntax as SSE has, but JSON
 * allows whitespace before its value (RFC 8259 section 2: `JSON-text = ws value ws`; JSON.parse,
 * Python's json.loads and every JSON reader take it). A send still waiting after `keepAliveMs`
 * commits its status and headers and writes one space each `keepAliveMs` until its answer is written:
 * a proxy that cuts a response silent for longer (nginx's proxy_read_timeout, a load balancer's idle
 * timeout) sees bytes, and so do the client's own read timers. An answer that comes sooner is
 * written as before, with its Content-Length (and, for a failure, its own status).
 *
 * Returns the function that stops it; the answer is then written with `res.end` when
 * `res.headersSent`. It stops by itself when the client goes away.
 */
export function holdOpen(
  res: ServerResponse,
  keepAliveMs: number,
  status: number,
  headers: OutgoingHttpHeaders = {},
): () => void {
  let timer: NodeJS.Timeout | undefined;
  const stop = () => {
    clearInterval(timer);
    res.off('close', stop);
  };
  timer = setInterval(() => {
    if (res.writableEnded || res.destroyed) return stop();
    if (!res.headersSent) res.writeHead(status, { 'Cache-Control': 'no-store', ...HELD_HEADERS, ...headers });
    res.write(' ');
  }, keepAliveMs);
  timer.unref();
  res.once('close', stop);
  return stop;
}

/** nginx passes the spaces on at once instead of buffering them (as it does for SSE). */
const HELD_HEADERS = { 'X-Accel-Buffering': 'no' } as const;
