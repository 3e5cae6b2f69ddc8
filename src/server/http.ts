import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AgentCard } from '@a2a-js/sdk';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import express from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config/settings.js';
import { LEGACY_CARD_PATH, type PublishedCard } from '../faces/a2a/agent-card.js';
import { INTERNAL_MESSAGE, type Transport } from '../faces/a2a/errors.js';
import { jsonRpcEndpoint } from '../faces/a2a/jsonrpc.js';
import { A2A_BLOCKING_TIMEOUT_MS, EngineRequestHandler } from '../faces/a2a/request-handler.js';
import { TaskCache } from '../faces/a2a/task-cache.js';
import type { ProtocolVersion } from '../faces/a2a/version.js';
import type { Audit } from '../faces/audit.js';
import { clientErrorOf } from '../faces/http/http-error.js';
import { InFlight } from '../faces/http/in-flight.js';
import { problem } from '../faces/http/problem.js';
import { METRICS_PATH } from '../metrics/endpoint.js';
import type { SigningKeys } from '../push/signing-keys.js';
import { traceRequest } from '../telemetry/http-spans.js';
import type { Backend } from './backend.js';
import { CARD_JWKS_PATH, type CardKeys } from './card-keys.js';
import { FACE_PATHS } from './face-paths.js';
import { type FaceContext, mounts } from './mounts.js';

/** The HTTP side over the backend: every face mounted on one Node server, not yet listening. */
export interface HttpSide {
  server: Server;
  /** Every face as one request listener: what `server` serves, and what an app of the user's mounts. */
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Answers still being written, waited for at shutdown. */
  inFlight: InFlight;
  /** Aborted at shutdown: waiting blocking sends answer with the task as it stands, streams end. */
  shutdown: AbortController;
  /**
   * Serves the agent card, the webhook signing keys and the card's keys (when it is signed): all
   * are made once the server's URL is known. Called again with a card signed anew (a key rotated).
   */
  publish(card: PublishedCard, keys: SigningKeys, cardKeys?: CardKeys): void;
  /** Whether {@link publish} was called: the gRPC binding, listening before, answers UNAVAILABLE until then. */
  published(): boolean;
  /** The A2A request handler the JSON-RPC and REST faces serve, for the gRPC binding to serve too. */
  handler: EngineRequestHandler;
  /** The handler's task cache, which the gRPC binding answers plain polls from too. */
  tasks: TaskCache;
  /** From now on every request is answered 503 (the ordered stop has begun). */
  stopTaking(): void;
}

export function buildHttp(backend: Backend, config: Config, logger: Logger): HttpSide {
  const { engine, admit } = backend;
  let card: PublishedCard | undefined;
  let keys: SigningKeys | undefined;
  let cardKeys: CardKeys | undefined;
  const currentCard = () => {
    if (!card) throw new Error('agent card requested before the server listens');
    return card;
  };
  // `via` says how the principal authenticated: an API key's alice and a token's alice of one tenant
  // are two principals.
  const audit: Audit = (action, principal, taskId, detail) =>
    logger.info(
      {
        audit: action,
        principal: principal.id,
        tenant: principal.tenant,
        via: principal.via,
        taskId,
        ...detail,
      },
      `audit: ${action}`,
    );
  // Polls of unchanged tasks, whatever the transport, answer from here (see task-cache.ts).
  const tasks = new TaskCache(engine, config.TASK_CACHE_BYTES);
  const handler = new EngineRequestHandler({
    tasks,
    engine,
    card: () => currentCard().sdk,
    extendedCard: (version, transport) => extendedCardFor(currentCard(), version, transport),
    audit,
    blockingTimeoutMs: config.BLOCKING_TIMEOUT_MS ?? A2A_BLOCKING_TIMEOUT_MS,
    pushPolicy: backend.pushPolicy,
    secrets: backend.secrets,
    logger,
  });
  const shutdown = new AbortController();
  const bodyAndStreams = {
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxJsonDepth: config.MAX_JSON_DEPTH,
    keepAliveMs: config.SSE_KEEPALIVE_MS,
    shutdown: shutdown.signal,
  };
  const jsonrpc = jsonRpcEndpoint({
    handler,
    engine,
    tasks,
    admit,
    logger,
    ...bodyAndStreams,
  });

  const app = express();
  app.disable('x-powered-by');
  const faces: FaceContext = {
    backend,
    config,
    logger,
    engine,
    admit,
    audit,
    handler,
    currentCard,
    bodyAndStreams,
  };
  for (const m of mounts(
    faces,
    () => keys,
    () => cardKeys,
  )) {
    if (m.method === 'use') app.use(m.path, m.serve);
    else app[m.method](m.path, m.serve);
  }
  app.use((_req, res) =>
    problem(res, 404, 'No such endpoint; the agent card lists the ones this agent serves'),
  );
  // Express would answer with the error's own message or stack trace. A caller's error (a 4xx the
  // framework marked, e.g. a malformed %-escape in the path) keeps its status, in our words; an
  // internal failure is logged and the caller told no more than that it happened.
  app.use((err: unknown, req: express.Request, res: express.Response, next: express.NextFunction) => {
    const client = clientErrorOf(err);
    if (!client) logger.error({ err, method: req.method, url: req.originalUrl }, 'request failed');
    if (res.headersSent) return next(err);
    if (client) problem(res, client.status, client.message);
    else problem(res, 500, INTERNAL_MESSAGE);
  });

  const inFlight = new InFlight();
  const requests = backend.metrics?.http;
  // Request spans are named by the face a request reached (docs/tracing.md).
  const routes = [
    ...Object.values(FACE_PATHS),
    LEGACY_CARD_PATH,
    '/.well-known/jwks.json',
    CARD_JWKS_PATH,
    '/healthz',
    METRICS_PATH,
  ];
  const listener = (req: IncomingMessage, res: ServerResponse) =>
    traceRequest(req, res, routes, () => serve(req, res));
  // Node would answer a missing Host itself, with an empty 400: refused in our words below instead.
  const server: Server = createServer({ requireHostHeader: false }, listener);
  let stopped = false;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    // Once the stop begins, a request on a kept-alive connection, or through an app that mounts the
    // faces, is turned away before it reaches a store that is about to close.
    if (stopped) {
      unavailable(
        res,
        'taskhandle is stopping; retry on another instance or once it is back (tasks are kept)',
      );
      return;
    }
    // Between the port opening and the card being made (it names the port), nothing is served yet:
    // every face reads the card, and a request there was answered 500.
    if (!card) {
      unavailable(res, 'taskhandle is starting; retry in a moment');
      return;
    }
    // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400 (HTTP/1.0 may omit it).
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      refuseNoHost(res);
      return;
    }
    inFlight.track(res);
    requests?.track(req, res);
    // The JSON-RPC endpoint is the hot path: served without the framework's router and parsers.
    if (req.method === 'POST' && (req.url === '/' || req.url?.startsWith('/?'))) {
      jsonrpc(req, res).catch((err: unknown) => {
        logger.error({ err }, 'JSON-RPC request failed');
        if (!res.headersSent) {
          const error = { code: A2A_ERROR_CODE.INTERNAL_ERROR, message: INTERNAL_MESSAGE };
          res.writeHead(500, { 'Content-Type': 'application/json' });
          res.write(JSON.stringify({ jsonrpc: '2.0', id: null, error }));
        }
        res.end();
      });
      return;
    }
    app(req, res);
  };
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);
  const publish = (published: PublishedCard, signing: SigningKeys, signingCards?: CardKeys) => {
    card = published;
    keys = signing;
    cardKeys = signingCards;
  };
  const stopTaking = () => {
    stopped = true;
  };
  const published = () => card !== undefined;
  return { server, listener, inFlight, shutdown, publish, published, handler, tasks, stopTaking };
}

/**
 * The extended card in the form the caller's transport sends, with the signatures made over that
 * form: v1.0 (every v1.0 transport sends its proto-JSON fields), v0.3 JSON-RPC (the SDK's v0.3
 * translation). v0.3 REST sends yet another form (v0.3 proto-JSON), not signed: there the card
 * goes without signatures rather than with ones that do not verify (docs/SECURITY.md).
 */
function extendedCardFor(
  card: PublishedCard,
  version: ProtocolVersion,
  transport: Transport,
): AgentCard | undefined {
  const { extended, extendedLegacy } = card;
  if (!extended || version === '1.0') return extended;
  if (transport === 'jsonrpc' && extendedLegacy) return extendedLegacy;
  return { ...extended, signatures: [] };
}

function refuseNoHost(res: ServerResponse): void {
  const body = JSON.stringify({
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail:
      'An HTTP/1.1 request must carry a Host header (RFC 9112, section 3.2): send the host and port you reach this server at',
  });
  res.writeHead(400, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/** 503 in problem form, and the connection closed: the caller retries elsewhere or a moment later. */
function unavailable(res: ServerResponse, detail: string): void {
  const body = JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail });
  res.writeHead(503, { 'Content-Type': 'application/problem+json', 'Retry-After': '1', Connection: 'close' });
  res.end(body);
}

/**
 * A request Node's HTTP parser cannot read (an unknown method, a malformed header) never reaches
 * the app: Node would close it with an empty 400. Answer it as the plain-HTTP faces do, a problem
 * document, and close the connection, whose state is unknown.
 */
function answerClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, title, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'The request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'The request did not arrive in time']
        : [400, 'Bad Request', 'The request is not valid HTTP/1.1 (its method, a header or its framing)'];
  const body = JSON.stringify({ type: 'about:blank', title, status, detail });
  // An answer to HEAD has no body (its client would read one as the next answer).
  const head = err.rawPacket?.toString('latin1', 0, 5) === 'HEAD ';
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
  );
}
