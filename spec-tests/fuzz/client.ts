import { Agent, request } from 'node:http';
import type { FuzzResponse } from './checks.js';
import type { FuzzRequest } from './requests.js';
import { expandBytes, expandDeep } from './values.js';

/** The most a response's body is read: enough for any error, not all of a big result. */
const READ_LIMIT = 64 * 1024;
/** A request unanswered after this long is a finding too (an SSE stream answers at once). */
const TIMEOUT_MS = 20_000;

/**
 * Sends generated requests as they are, bytes and all (fetch would normalise the path and refuse
 * odd methods), over at most `sockets` connections. An event stream is read to its first chunk and
 * closed.
 */
export function fuzzClient(
  baseUrl: string,
  credentials: Record<FuzzRequest['as'], Record<string, string>>,
  sockets: number,
) {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const send = (r: FuzzRequest): Promise<FuzzResponse> =>
    new Promise((resolve, reject) => {
      const body = r.body === undefined ? undefined : Buffer.from(expandBytes(expandDeep(r.body)));
      const headers: Record<string, string> = { ...r.headers, ...credentials[r.as] };
      if (body) headers['Content-Length'] = String(body.length);
      const req = request({
        agent,
        host: url.hostname,
        port: url.port,
        method: r.method,
        path: r.path,
        headers,
        timeout: TIMEOUT_MS,
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      req.on('error', reject);
      let answered = false;
      req.on('response', (res) => {
        answered = true;
        const contentType = String(res.headers['content-type'] ?? '');
        const sse = contentType.startsWith('text/event-stream');
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType,
            text: Buffer.concat(chunks).toString('utf8'),
            truncated: size > READ_LIMIT,
          });
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= READ_LIMIT) chunks.push(chunk);
          if (sse || size > READ_LIMIT) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', () => done());
        // An event stream whose first event has not come yet: its headers said enough.
        if (sse) {
          setTimeout(() => {
            done();
            res.destroy();
          }, 200).unref();
        }
      });
      if (r.hangUpAfter === undefined || !body) req.end(body);
      else {
        // All of Content-Length announced, some of it sent, then the connection dropped.
        req.write(body.subarray(0, r.hangUpAfter));
        setTimeout(() => {
          if (!answered) resolve({ status: 0, contentType: '', text: '', hungUp: true });
          req.destroy();
        }, 50);
      }
    });
  return { send, close: () => agent.destroy() };
}
