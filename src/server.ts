import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import type { Duplex } from 'node:stream';
import { A2A_ERROR_CODE } from '@a2a-js/sdk/errors';
import express from 'express';
import { type Logger, pino } from 'pino';
import { openAuthenticator } from './auth/open.js';
import { RateLimiter } from './auth/rate-limiter.js';
import { type Config, ConfigError, describeDatabase } from './config.js';
import { Engine } from './engine/engine.js';
import { EventHub } from './engine/events.js';
import { anonymousTaskId } from './engine/ids.js';
import { Journal } from './engine/journal.js';
import { SkillRegistry } from './engine/registry.js';
import { Sweeper } from './engine/retention.js';
import { Runner } from './engine/runner.js';
import type { AnySkill } from './engine/skill.js';
import type { TaskStore } from './engine/store-port.js';
import { type PublishedCard, publishCard, REST_PATH, serveCard } from './faces/a2a/agent-card.js';
import { INTERNAL_MESSAGE } from './faces/a2a/errors.js';
import { jsonRpcEndpoint } from './faces/a2a/jsonrpc.js';
import { renderNotification } from './faces/a2a/push-body.js';
import { EngineRequestHandler } from './faces/a2a/request-handler.js';
import { restRouter } from './faces/a2a/rest.js';
import { TaskJsonCache } from './faces/a2a/task-json.js';
import type { Audit } from './faces/audit.js';
import { home } from './faces/home.js';
import { admission } from './faces/http/admission.js';
import { clientErrorOf } from './faces/http/http-error.js';
import { InFlight } from './faces/http/in-flight.js';
import { problem } from './faces/http/problem.js';
import { INBOX_PATH, inboxRouter } from './faces/inbox/router.js';
import { artifactPath } from './faces/jobs/document.js';
import { jobsRouter } from './faces/jobs/router.js';
import { PushDispatcher } from './push/dispatcher.js';
import { SecretBox } from './push/secret-box.js';
import { SigningKeys } from './push/signing-keys.js';
import { commandSkill, loadCommands } from './skills/command.js';
import { BUILTIN_SKILLS } from './skills/index.js';
import { openStore } from './store/open.js';
import { installZodWords } from './zod-words.js';

export interface ServerOptions {
  config: Config;
  /** Skills besides the built-in ones (the conformance fixture adds its own). */
  skills?: readonly AnySkill[];
  logger?: Logger;
}

export interface RunningServer {
  /** Base URL the server is reachable at (PUBLIC_URL, else host and bound port). */
  url: string;
  port: number;
  engine: Engine;
  logger: Logger;
  /** Ordered, idempotent shutdown; resolves when the store is closed. */
  stop(): Promise<void>;
}

/** At shutdown, how long answers still being written get before their sockets are closed. */
const DRAIN_MS = 2000;
/** How often keys rotated by `taskhandle keys rotate` (another process) are picked up. */
const KEYS_RELOAD_MS = 10_000;

/** The composition root: store -> engine -> runner -> faces -> HTTP server. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { config } = options;
  installZodWords();
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL, base: { service: 'taskhandle' } });
  const operatorSkills = loadOperatorSkills(config);
  const offered = [...BUILTIN_SKILLS, ...operatorSkills, ...(options.skills ?? [])];
  if (config.DEFAULT_SKILL !== undefined && !offered.some((s) => s.id === config.DEFAULT_SKILL)) {
    const ids = offered.map((s) => s.id).join(', ');
    throw new ConfigError(`DEFAULT_SKILL=${config.DEFAULT_SKILL}: not a skill of this server (${ids})`);
  }
  const skills = new SkillRegistry(offered, config.DEFAULT_SKILL);
  const extendedSkills = new Set(
    config.EXTENDED_SKILLS.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  for (const id of extendedSkills) {
    if (!skills.get(id)) throw new ConfigError(`EXTENDED_SKILLS=${config.EXTENDED_SKILLS}: no skill "${id}"`);
  }
  const authenticator = openAuthenticator(config);
  const limiter =
    config.RATE_LIMIT_PER_S > 0
      ? new RateLimiter(config.RATE_LIMIT_PER_S, config.RATE_LIMIT_BURST ?? 2 * config.RATE_LIMIT_PER_S)
      : undefined;
  const admit = admission(authenticator, limiter);
  const secrets = await SecretBox.open(config.keysDir, logger).catch((err: Error) => {
    throw new ConfigError(`KEYS_DIR=${config.keysDir}: cannot use the webhook secrets key (${err.message})`);
  });
  // Opened once every other setting has passed: a refused start leaves no connection behind.
  const store: TaskStore = await openStore(config, logger).catch((err: Error) => {
    const where = describeDatabase(config.database);
    throw new ConfigError(`DATABASE_URL=${where.url ?? where.path}: cannot open the store (${err.message})`);
  });
  const hub = new EventHub();
  let baseUrl = '';
  const journal = new Journal({ store, hub });
  const engine = new Engine({
    journal,
    skills,
    // Anonymous callers reach a task by its id alone: fully random ids, and a shorter life.
    maxTtlMs: authenticator.anonymous
      ? Math.min(config.MAX_TTL_MS, config.ANONYMOUS_MAX_TTL_MS)
      : config.MAX_TTL_MS,
    newTaskId: authenticator.anonymous ? anonymousTaskId : undefined,
    cancelGraceMs: config.CANCEL_GRACE_MS,
    maxActiveTasks: config.MAX_ACTIVE_TASKS,
    limits: {
      maxMessageParts: config.MAX_MESSAGE_PARTS,
      maxHistoryMessages: config.MAX_HISTORY_MESSAGES,
      maxHistoryBytes: config.MAX_HISTORY_BYTES,
      maxArtifactBytes: config.MAX_ARTIFACT_BYTES,
      inlineArtifactBytes: config.INLINE_ARTIFACT_BYTES,
      maxStoredBytes: config.MAX_STORED_BYTES,
    },
    // Absolute, as callers of every face fetch it; the base is known once the server listens.
    artifactUrl: (taskId, artifactId) => `${baseUrl}${artifactPath(taskId, artifactId)}`,
  });
  const runner = new Runner({
    engine,
    journal,
    workerId: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    concurrency: config.RUNNER_CONCURRENCY,
    leaseMs: config.LEASE_MS,
    pollMs: config.RUNNER_POLL_MS,
    maxInterruptions: config.MAX_INTERRUPTIONS,
    logger,
  });
  const sweeper = new Sweeper({
    store,
    intervalMs: config.SWEEP_INTERVAL_MS,
    batch: 500,
    clock: engine.now,
    logger,
  });

  let card: PublishedCard | undefined;
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
  const handler = new EngineRequestHandler({
    engine,
    card: () => currentCard().sdk,
    extendedCard: () => currentCard().extended,
    audit,
    blockingTimeoutMs: config.BLOCKING_TIMEOUT_MS,
    pushPolicy: config.pushPolicy,
    secrets,
    logger,
  });
  let keys: SigningKeys | undefined;
  const shutdown = new AbortController();
  const bodyAndStreams = {
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxJsonDepth: config.MAX_JSON_DEPTH,
    keepAliveMs: config.SSE_KEEPALIVE_MS,
    shutdown: shutdown.signal,
  };
  const jsonrpc = jsonRpcEndpoint({
    handler,
    tasks: new TaskJsonCache(engine, config.TASK_CACHE_BYTES),
    admit,
    logger,
    ...bodyAndStreams,
  });

  const app = express();
  app.disable('x-powered-by');
  app.get('/.well-known/agent-card.json', serveCard(currentCard));
  app.get('/', home(currentCard));
  // The public keys that verify our webhook notifications' signatures.
  app.get('/.well-known/jwks.json', async (_req, res) => {
    // The folder is read now (when it changed), not at the next timer: a key that another instance or
    // `keys rotate` just wrote, and may already sign with, is published by every instance at once.
    await keys
      ?.reload()
      .catch((err: unknown) => logger.error({ err }, 'push: reloading signing keys failed'));
    res.set('Cache-Control', 'public, max-age=60').json(keys?.jwks());
  });
  app.get('/healthz', async (_req, res) => {
    try {
      await store.ping();
      res.json({ status: 'ok' });
    } catch (err) {
      logger.error({ err }, 'health check: store unreachable');
      res.status(503).json({ status: 'unavailable', reason: 'store unreachable' });
    }
  });
  app.use(REST_PATH, restRouter({ handler, admit, logger, ...bodyAndStreams }));
  // The approvals inbox: a page for people, answering through the same engine and credentials.
  app.use(INBOX_PATH, inboxRouter({ engine, admit, audit, ...bodyAndStreams }));
  // The same tasks as plain HTTP 202 Accepted jobs (docs/http-jobs.md).
  app.use('/v1', jobsRouter({ engine, admit, audit, ...bodyAndStreams }));
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
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    inFlight.track(res);
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
  });
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      store
        .close()
        .finally(() =>
          reject(
            new ConfigError(
              `HOST=${config.HOST} PORT=${config.PORT}: cannot listen (${err.code ?? err.message})`,
            ),
          ),
        );
    });
    server.listen(config.PORT, config.HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url =
    config.PUBLIC_URL ?? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  baseUrl = url;
  card = publishCard(config.AGENT_CARD_FILE, url, skills.all(), {
    apiKeys: config.API_KEYS_FILE !== undefined,
    jwt: config.JWT_ISSUER !== undefined,
    extendedSkills,
  });
  const signing = await SigningKeys.open(config.keysDir, { issuer: url, logger }).catch(
    async (err: Error) => {
      server.close();
      await store.close();
      throw new ConfigError(`KEYS_DIR=${config.keysDir}: cannot use the signing keys (${err.message})`);
    },
  );
  keys = signing;
  const keysReload = setInterval(() => {
    signing
      .reload()
      .then(() => signing.prune())
      .catch((err: unknown) => logger.error({ err }, 'push: reloading signing keys failed'));
  }, KEYS_RELOAD_MS);
  keysReload.unref();
  const dispatcher = new PushDispatcher({
    store,
    keys: signing,
    render: renderNotification,
    artifactUrl: engine.artifactUrl,
    policy: config.pushPolicy,
    secrets,
    timeoutMs: config.PUSH_TIMEOUT_MS,
    maxAgeMs: config.PUSH_MAX_AGE_MS,
    retryBaseMs: config.PUSH_RETRY_MS,
    retryMaxMs: config.PUSH_RETRY_MAX_MS,
    dnsMaxAttempts: config.PUSH_DNS_MAX_ATTEMPTS,
    concurrency: config.PUSH_CONCURRENCY,
    pollMs: config.PUSH_POLL_MS,
    clock: engine.now,
    logger,
  });
  journal.onPushQueued(() => dispatcher.nudge());
  runner.start();
  sweeper.start();
  dispatcher.start();
  logger.info(
    { url, database: describeDatabase(config.database), skills: skills.all().map((s) => s.id) },
    'taskhandle listening',
  );

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      logger.info('shutting down: no new connections');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await runner.stop(config.SHUTDOWN_TIMEOUT_MS);
      await sweeper.stop();
      clearInterval(keysReload);
      // Deliveries cut short are retried at the next start, once their lease has run out.
      await dispatcher.stop(Math.min(config.SHUTDOWN_TIMEOUT_MS, config.PUSH_TIMEOUT_MS + 1000));
      // Waiting blocking sends now answer with the task as it stands, and open streams end: their
      // clients resume with Last-Event-ID on another instance or after the restart.
      shutdown.abort('shutdown');
      await inFlight.drained(DRAIN_MS);
      server.closeAllConnections();
      await closed;
      await store.close();
      logger.info('stopped');
    })();
    return stopping;
  };
  return { url, port, engine, logger, stop };
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

/** Skills the operator configures: `command`, when COMMANDS_FILE names its allow-list. */
function loadOperatorSkills(config: Config): AnySkill[] {
  if (!config.COMMANDS_FILE) return [];
  try {
    return [commandSkill(loadCommands(config.COMMANDS_FILE), { killGraceMs: config.COMMAND_KILL_GRACE_MS })];
  } catch (err) {
    throw new ConfigError(`COMMANDS_FILE=${config.COMMANDS_FILE}: ${(err as Error).message}`);
  }
}
