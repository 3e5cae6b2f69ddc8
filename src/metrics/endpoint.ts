import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ConfigError } from '../config/error.js';

export const METRICS_PATH = '/metrics';

/**
 * Answers `GET /metrics` with the registry in Prometheus' text format. With a `token`, only a
 * request that sends it as `Authorization: Bearer <token>` is answered (compared in constant time).
 */
export function metricsEndpoint(
  registry: Registry,
  token: string | undefined,
  logger: Logger,
): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = token === undefined ? undefined : digest(token);
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      answer(res, 405, 'Method Not Allowed', 'Only GET reads the metrics', { Allow: 'GET, HEAD' });
      return;
    }
    if (expected && !bearerMatches(req.headers.authorization, expected)) {
      answer(
        res,
        401,
        'Unauthorized',
        'Send the metrics token (METRICS_TOKEN) as Authorization: Bearer <token>',
        { 'WWW-Authenticate': 'Bearer realm="taskhandle-metrics"' },
      );
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        logger.error({ err }, 'metrics: collecting failed');
        answer(
          res,
          500,
          'Internal Server Error',
          'The metrics could not be collected (the server logged why)',
        );
      },
    );
  };
}

/**
 * A listener of its own for the metrics (METRICS_PORT on HOST): a scraper reaches them without
 * reaching the faces, and a firewall can tell the two apart.
 */
export function listenMetrics(
  serve: (req: IncomingMessage, res: ServerResponse) => void,
  host: string,
  port: number,
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    if (path === METRICS_PATH) serve(req, res);
    else answer(res, 404, 'Not Found', `This port serves only ${METRICS_PATH}`);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new ConfigError(`HOST=${host} METRICS_PORT=${port}: cannot listen (${err.code ?? err.message})`),
      ),
    );
    server.listen(port, host, () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

function bearerMatches(authorization: string | undefined, expected: Buffer): boolean {
  const sent = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  // Digests have one length whatever was sent: the comparison takes the same time for any token.
  return sent !== undefined && timingSafeEqual(digest(sent), expected);
}

function answer(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ type: 'about:blank', title, status, detail });
  res.writeHead(status, { 'Content-Type': 'application/problem+json', ...headers });
  res.end(body);
}
