import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, type JWTPayload, jwtVerify } from 'jose';

/** One request the receiver got, as it arrived. */
export interface Received {
  /** Position among every request this receiver got (0 first), across close/reopen. */
  index: number;
  method: string;
  /** Path and query, as on the request line. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact body bytes. */
  raw: Buffer;
  /** `raw` as UTF-8 text. */
  body: string;
  /** Date.now() when the body had been read. */
  at: number;
  /** The status answered; undefined while the reply is held back (or was never sent). */
  status?: number;
  /** The client went away before we answered (a timeout on its side). */
  closedEarly: boolean;
}

/** How to answer one request: a status, optionally held back `delayMs` first. */
export interface Reply {
  status: number;
  delayMs?: number;
  /** Headers of the answer besides Content-Type (e.g. Retry-After). */
  headers?: Record<string, string>;
}

/** Picks the reply to a request (`req.index` counts from 0 over the receiver's life). */
export type Behaviour = (req: Received) => Reply;

/** Always the same status. */
export const always =
  (status: number): Behaviour =>
  () => ({ status });

/** The first `n` requests get `status` (a failure), the rest 200. */
export const failFirst =
  (n: number, status = 500): Behaviour =>
  (req) => ({ status: req.index < n ? status : 200 });

/** The first `n` requests are held `delayMs` before their 200 (longer than the sender waits), the rest answered at once. */
export const hangFirst =
  (n: number, delayMs: number): Behaviour =>
  (req) =>
    req.index < n ? { status: 200, delayMs } : { status: 200 };

/** Every claim a notification JWT carries, once verified. */
export interface NotificationClaims extends JWTPayload {
  taskId: string;
  notificationId: string;
  request_body_sha256: string;
}

/** A request's JWT claims, decoded but NOT verified (to pick a reply by who signed; use `verify` to check). */
export const tokenClaims = (req: Received): NotificationClaims =>
  decodeJwt<NotificationClaims>(String(req.headers['x-a2a-notification-signature']));

/**
 * A real webhook receiver on 127.0.0.1 (port 0, then kept across `close()`/`reopen()`), recording
 * every request and answering as `behaviour` (a function of the request) says.
 * @example
 *   const hook = await startReceiver(failFirst(3, 503));
 *   await send(agent, msg, { taskPushNotificationConfig: { url: hook.url('/hook') } });
 *   const [ok] = await hook.waitFor((all) => all.filter((r) => r.status === 200).length === 1);
 */
export interface Receiver {
  /** The receiver's URL with `path` (and fragment, if any) appended. */
  url(path?: string): string;
  readonly port: number;
  /** Every request so far, in arrival order (a live array). */
  readonly received: Received[];
  /** Stops listening (the port refuses connections) and drops open connections. */
  close(): Promise<void>;
  /** Listens again on the same port. */
  reopen(): Promise<void>;
  /** Polls the recorded requests until `done(received)` is true; resolves with them. */
  waitFor(done: (received: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  /**
   * Verifies a request's `X-A2A-Notification-Signature` against the agent's JWKS: ES256, issuer
   * (default `agentUrl`), audience (the webhook URL without fragment), the id header, and the body
   * hash. Throws on any mismatch; returns the claims.
   */
  verify(agentUrl: string, req: Received, o?: { issuer?: string }): Promise<NotificationClaims>;
}

export async function startReceiver(behaviour: Behaviour = always(200)): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const entry: Received = {
        index: received.length,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body: raw.toString('utf8'),
        at: Date.now(),
        closedEarly: false,
      };
      received.push(entry);
      res.on('close', () => {
        if (!res.writableFinished) entry.closedEarly = true;
      });
      const { status, delayMs = 0, headers = {} } = behaviour(entry);
      const answer = () => {
        if (entry.closedEarly) return;
        entry.status = status;
        res.writeHead(status, { 'Content-Type': 'text/plain', ...headers }).end('ok');
      };
      if (delayMs > 0) setTimeout(answer, delayMs).unref();
      else answer();
    });
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const base = `http://127.0.0.1:${port}`;

  return {
    port,
    received,
    url: (path = '/hook') => `${base}${path}`,
    close() {
      if (!server.listening) return Promise.resolve();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      return closed;
    },
    reopen: () => listen(port),
    async waitFor(done, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(received)) {
        if (Date.now() > deadline) {
          const seen = received.map((r) => `${r.status ?? '-'} ${r.headers['x-a2a-notification-id']}`);
          throw new Error(`webhook condition not met within ${timeoutMs} ms; got: ${seen.join(', ')}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      return received;
    },
    async verify(agentUrl, req, o = {}) {
      const jwks = createLocalJWKSet(
        (await (await fetch(`${agentUrl}/.well-known/jwks.json`)).json()) as JSONWebKeySet,
      );
      const token = String(req.headers['x-a2a-notification-signature']);
      const { payload, protectedHeader } = await jwtVerify<NotificationClaims>(token, jwks, {
        issuer: o.issuer ?? agentUrl,
        audience: `${base}${req.path}`,
        algorithms: ['ES256'],
      });
      const check = (what: string, actual: unknown, expected: unknown) => {
        if (actual !== expected)
          throw new Error(`JWT ${what}: ${String(actual)}, expected ${String(expected)}`);
      };
      check('header typ', protectedHeader.typ, 'JWT');
      check('notificationId', payload.notificationId, req.headers['x-a2a-notification-id']);
      const sha = createHash('sha256').update(req.raw).digest('hex');
      check('request_body_sha256', payload.request_body_sha256, sha);
      for (const claim of ['iat', 'exp', 'jti', 'taskId'] as const)
        if (payload[claim] === undefined) throw new Error(`JWT has no ${claim}`);
      return payload;
    },
  };
}
