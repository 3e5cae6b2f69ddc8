import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config/settings.js';
import type { Engine } from '../engine/engine.js';
import { LEGACY_CARD_PATH, type PublishedCard, serveCard } from '../faces/a2a/agent-card.js';
import type { EngineRequestHandler } from '../faces/a2a/request-handler.js';
import { restRouter } from '../faces/a2a/rest.js';
import type { Audit } from '../faces/audit.js';
import { consoleRouter } from '../faces/console/router.js';
import { home } from '../faces/home.js';
import type { FaceOptions } from '../faces/http/admission.js';
import { problem } from '../faces/http/problem.js';
import { inboxRouter } from '../faces/inbox/router.js';
import { jobsRouter } from '../faces/jobs/router.js';
import {
  PROTECTED_RESOURCE_PATH,
  protectedResourceUrl,
  serveProtectedResource,
} from '../faces/mcp/protected-resource.js';
import { mcpRouter } from '../faces/mcp/router.js';
import { workersRouter } from '../faces/workers/router.js';
import { METRICS_PATH, metricsEndpoint } from '../metrics/endpoint.js';
import type { SigningKeys } from '../push/signing-keys.js';
import type { Backend } from './backend.js';
import { CARD_JWKS_PATH, type CardKeys } from './card-keys.js';
import { FACE_PATHS } from './face-paths.js';

/** What every face is built with: the backend, the settings, and what the HTTP side made once. */
export interface FaceContext {
  backend: Backend;
  config: Config;
  logger: Logger;
  engine: Engine;
  admit: FaceOptions['admit'];
  audit: Audit;
  /** The A2A request handler (JSON-RPC's fast path and REST serve it; gRPC too). */
  handler: EngineRequestHandler;
  currentCard: () => PublishedCard;
  bodyAndStreams: Omit<FaceOptions, 'admit'>;
}

/** One route of the server: a path (or paths), how it is matched, what serves it. */
export interface Mount {
  method: 'use' | 'get' | 'all';
  path: string | string[];
  serve: RequestHandler;
}

/**
 * Every face and well-known document of the server, in the order they are matched (the JSON-RPC
 * endpoint is served before the framework, by server/http.ts). `keys`: the webhook signing keys,
 * known once the server's URL is.
 */
export function mounts(
  c: FaceContext,
  keys: () => SigningKeys | undefined,
  cardKeys: () => CardKeys | undefined,
): Mount[] {
  const { backend, config, logger, engine, admit, audit, handler, bodyAndStreams } = c;
  const issuer = config.JWT_ISSUER;
  return [
    // The pre-0.3 path too: the same card, headers and rules (faces/a2a/agent-card.ts, LEGACY_CARD_PATH).
    { method: 'get', path: [FACE_PATHS.agentCard, LEGACY_CARD_PATH], serve: serveCard(c.currentCard) },
    { method: 'get', path: '/', serve: home(c.currentCard) },
    { method: 'get', path: '/.well-known/jwks.json', serve: jwks(keys, logger) },
    // The agent card's own keys (the `jku` of its signatures); 404 when the card is not signed.
    { method: 'get', path: CARD_JWKS_PATH, serve: cardJwks(cardKeys) },
    { method: 'get', path: '/healthz', serve: health(backend, logger) },
    // With a token, the metrics are served here too (docs/metrics.md); else only on METRICS_PORT, if set.
    ...(backend.metrics && config.METRICS_TOKEN !== undefined
      ? [
          {
            method: 'all' as const,
            path: METRICS_PATH,
            serve: metricsEndpoint(backend.metrics.registry, config.METRICS_TOKEN, logger),
          },
        ]
      : []),
    {
      method: 'use',
      path: FACE_PATHS.a2aRest,
      serve: restRouter({ handler, engine, admit, logger, ...bodyAndStreams }),
    },
    // The approvals inbox: a page for people, answering through the same engine and credentials.
    {
      method: 'use',
      path: FACE_PATHS.inbox,
      serve: inboxRouter({ engine, admit, audit, ...bodyAndStreams }),
    },
    // The operator console: every principal's tasks, for OPERATORS (docs/console.md).
    {
      method: 'use',
      path: FACE_PATHS.console,
      serve: consoleRouter({ engine, admit, audit, ...bodyAndStreams }),
    },
    // Remote workers claim and work remote skills' tasks (docs/workers.md).
    {
      method: 'use',
      path: '/v1/workers',
      serve: workersRouter({
        runs: backend.remoteRuns,
        skills: backend.skills,
        audit,
        admit,
        leaseMs: config.LEASE_MS,
        localWorker: backend.localWorker,
        ...bodyAndStreams,
      }),
    },
    // The same tasks as plain HTTP 202 Accepted jobs (docs/http-jobs.md).
    {
      method: 'use',
      path: '/v1',
      serve: jobsRouter({ engine, admit, audit, extendedSkills: backend.extendedSkills, ...bodyAndStreams }),
    },
    // MCP's protected-resource metadata, when tokens of an issuer are taken.
    ...(issuer === undefined
      ? []
      : [
          {
            method: 'get' as const,
            path: [PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}${FACE_PATHS.mcp}`],
            serve: serveProtectedResource({ baseUrl: backend.baseUrl, issuer }),
          },
        ]),
    // The same tasks for MCP clients: skills as tools, tasks as MCP tasks (docs/mcp.md).
    { method: 'use', path: FACE_PATHS.mcp, serve: mcp(c) },
  ];
}

/** The public keys that verify our webhook notifications' signatures. */
function jwks(keys: () => SigningKeys | undefined, logger: Logger): RequestHandler {
  return async (_req, res) => {
    // The folder is read now (when it changed), not at the next timer: a key that another instance or
    // `keys rotate` just wrote, and may already sign with, is published by every instance at once.
    await keys()
      ?.reload()
      .catch((err: unknown) => logger.error({ err }, 'push: reloading signing keys failed'));
    res.set('Cache-Control', 'public, max-age=60').json(keys()?.jwks());
  };
}

/**
 * The public keys that verify the agent card's signatures: those that signed the card being served.
 * Not reread here: a card and its keys change together (create.ts re-signs on a key change), so a
 * card from this instance always verifies against the set this instance serves.
 */
function cardJwks(keys: () => CardKeys | undefined): RequestHandler {
  return (_req, res) => {
    const current = keys();
    if (!current) {
      problem(res, 404, 'The agent card is not signed here (CARD_SIGNING=false): there are no card keys');
      return;
    }
    res
      .set({ 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' })
      .json(current.jwks());
  };
}

/** `{"status":"ok"}` while the store answers, 503 otherwise. */
function health(backend: Backend, logger: Logger): RequestHandler {
  return async (_req, res) => {
    try {
      await backend.store.ping();
      res.json({ status: 'ok' });
    } catch (err) {
      logger.error({ err }, 'health check: store unreachable');
      res.status(503).json({ status: 'unavailable', reason: 'store unreachable' });
    }
  };
}

/**
 * How long a plain MCP `tools/call` (a client that takes no SSE) is held when BLOCKING_TIMEOUT_MS is
 * unset: under the 60 s request timeout of the MCP SDK's clients (DEFAULT_REQUEST_TIMEOUT_MSEC), as
 * it always was. A2A's default is its own (faces/a2a/request-handler.ts).
 */
const MCP_BLOCKING_TIMEOUT_MS = 30_000;

function mcp(c: FaceContext): RequestHandler {
  const { backend, config } = c;
  const issuer = config.JWT_ISSUER;
  return mcpRouter({
    engine: c.engine,
    admit: c.admit,
    audit: c.audit,
    version: () => c.currentCard().sdk.version,
    resourceMetadataUrl: () => (issuer === undefined ? undefined : protectedResourceUrl(backend.baseUrl())),
    baseUrl: backend.baseUrl,
    allowedOrigins: backend.allowedOrigins,
    blockingTimeoutMs: config.BLOCKING_TIMEOUT_MS ?? MCP_BLOCKING_TIMEOUT_MS,
    ...c.bodyAndStreams,
  });
}
