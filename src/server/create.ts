import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, pino } from 'pino';
import { ConfigError } from '../config/error.js';
import { settingsOfOptions } from '../config/options.js';
import { type Config, loadConfig } from '../config/settings.js';
import type { Settings } from '../config/settings-options.js';
import type { RemoteSkill, Skill } from '../engine/skill.js';
import { type PublishedCard, publishCard } from '../faces/a2a/agent-card.js';
import type { GrpcSide } from '../faces/a2a/grpc.js';
import { renderNotification } from '../faces/a2a/push-body.js';
import { signPublished } from '../faces/a2a/signed-card.js';
import { listenMetrics, metricsEndpoint } from '../metrics/endpoint.js';
import { PushDispatcher } from '../push/dispatcher.js';
import { SigningKeys } from '../push/signing-keys.js';
import { setAgentName } from '../telemetry/tracing.js';
import { installZodWords } from '../words/zod-words.js';
import { type Backend, buildBackend } from './backend.js';
import { CARD_JWKS_PATH, type CardKeys, openCardKeys } from './card-keys.js';
import { buildHttp, type HttpSide } from './http.js';
import { listeningLine } from './listening.js';
import { offeredSkills } from './skills.js';
import { orderedStop } from './stop.js';

/**
 * What createServer takes: every setting (docs/settings.md) as a typed option, the skills to serve,
 * and how to serve them. An option left out is read from `env` (default: the process environment),
 * else its default.
 */
export interface ServerOptions extends Settings {
  /**
   * Skills to serve besides the built-in ones (`builtinSkills: false` serves these alone) and those
   * of `skillModules`. Define each with {@link defineSkill}.
   */
  // biome-ignore lint/suspicious/noExplicitAny: skills of any input type are served side by side.
  skills?: readonly (Skill<any> | RemoteSkill<any>)[];
  /**
   * `false`: open no port. Every face is then served by {@link TaskServer.handler}, mounted in an app
   * of yours; `publicUrl` must say where callers reach it. gRPC and metrics still listen on their
   * own ports when `grpcPort` / `metricsPort` are set. Default: listen on `host`:`port`.
   */
  listen?: boolean;
  /** Where options left out are read from (default: `process.env`; `{}` reads none). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The pino logger to write to (default: JSON lines on stdout at `logLevel`). */
  logger?: Logger;
}

/** A running taskhandle server. */
export interface TaskServer {
  /** The base URL callers reach it at: `publicUrl`, else `http://host:port`. */
  readonly url: string;
  /** The port it listens on; undefined when mounted (`listen: false`). */
  readonly port: number | undefined;
  /** The A2A gRPC binding's port, when `grpcPort` serves it. */
  readonly grpcPort: number | undefined;
  /** The skills it serves, in order, each with where it came from (`built-in`, a module, `createServer`). */
  readonly skills: readonly { id: string; from: string }[];
  /**
   * Every face (A2A JSON-RPC and REST, /v1/jobs, MCP, inbox, console, agent card) as one node:http
   * request listener, for an app of yours: `http.createServer(server.handler)`, or in express
   * `app.use('/agent', server.handler)` before any body parser (it reads the bodies itself).
   */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * Stops in order: no new requests, running jobs finish until `shutdownTimeoutMs` (then they are
   * released, and re-run or taken over on the next start), streams end, the store closes last.
   * Idempotent: every call returns the same promise.
   */
  close(): Promise<void>;
}

/** How often keys rotated by `taskhandle keys rotate` (another process) are picked up. */
const KEYS_RELOAD_MS = 10_000;

/**
 * Starts taskhandle: the store, the engine and its runner, every face, webhook delivery, the agent
 * card. What `taskhandle serve` runs (as {@link startServer}, on the settings it validated). A bad
 * option or setting rejects with a ConfigError naming it, before anything is opened.
 *
 * @example
 * const server = await createServer({ skills: [report], builtinSkills: false, port: 0 });
 * console.log(server.url); // http://127.0.0.1:41873
 * await server.close();
 */
export async function createServer(options: ServerOptions = {}): Promise<TaskServer> {
  installZodWords();
  const { skills = [], listen = true, env = process.env, logger, ...settings } = options;
  const fromOptions = settingsOfOptions(settings);
  const config = loadConfig({ ...env, ...fromOptions.env }, fromOptions.given);
  return startServer(config, { skills, listen, logger });
}

/**
 * {@link createServer} on settings already validated: what `taskhandle serve` runs, which validated
 * them itself to make its logger first (its `LOG_LEVEL`). Not exported from the package.
 */
export async function startServer(
  config: Config,
  {
    skills: given = [],
    listen = true,
    logger: userLogger,
  }: Pick<ServerOptions, 'skills' | 'listen' | 'logger'>,
): Promise<TaskServer> {
  installZodWords();
  if (!listen && config.PUBLIC_URL === undefined)
    throw new ConfigError(
      'createServer({ listen: false }): set publicUrl to the URL callers reach your app at ' +
        '(e.g. http://127.0.0.1:3000/agent): the agent card and artifact links start with it',
    );
  const logger = userLogger ?? pino({ level: config.LOG_LEVEL, base: { service: 'taskhandle' } });
  const offered = await offeredSkills(config, given);
  const backend = await buildBackend(config, offered, logger, { mounted: !listen });
  const http = buildHttp(backend, config, logger);
  // A start that fails past here closes what it opened (a library caller's process goes on: a
  // listening port or a held SQLite lock must not outlive the refusal).
  let grpc: GrpcSide | undefined;
  const undo = async () => {
    http.server.close();
    grpc?.close();
    await backend.store.close();
  };
  let port: number | undefined;
  let url: string;
  let card: PublishedCard;
  let signing: SigningKeys;
  let cardKeys: CardKeys | undefined;
  let grpcFace: { address: string; tls: boolean } | undefined;
  try {
    port = listen ? await listenOn(http.server, config) : undefined;
    url = config.PUBLIC_URL ?? `http://${bracketed(config.HOST)}:${port}`;
    backend.setBaseUrl(url);
    grpc = await startGrpcSide(config, http, backend, logger);
    // The card's gRPC target: the public URL's host (clients dial that) and the gRPC port.
    grpcFace = grpc && { address: `${new URL(url).hostname}:${grpc.port}`, tls: grpc.tls };
    card = publishCard(
      config.AGENT_CARD_FILE,
      url,
      backend.skills.all(),
      {
        apiKeys: config.API_KEYS_FILE !== undefined,
        jwt: config.JWT_ISSUER !== undefined,
        extendedSkills: backend.extendedSkills,
      },
      grpcFace?.address,
    );
    signing = await SigningKeys.open(config.keysDir, { issuer: url, logger }).catch((err: Error) => {
      throw new ConfigError(`KEYS_DIR=${config.keysDir}: cannot use the signing keys (${err.message})`);
    });
    cardKeys = await openCardKeys(config, logger);
    if (cardKeys) card = await signPublished(card, cardKeys.signers(), `${url}${CARD_JWKS_PATH}`);
  } catch (err) {
    await undo();
    throw err;
  }
  http.publish(card, signing, cardKeys);
  setAgentName(card.sdk.name);
  const keysReload = setInterval(() => {
    signing
      .reload()
      .then(() => signing.prune())
      .catch((err: unknown) => logger.error({ err }, 'push: reloading signing keys failed'));
    resignCard();
  }, KEYS_RELOAD_MS);
  keysReload.unref();
  // A card key rotated (`taskhandle keys rotate --card`, a new CARD_SIGNING_KEY_FILE) or past its
  // overlap: the card is signed again with the keys now published, and served with them at once.
  let resigning = false;
  function resignCard(): void {
    const keys = cardKeys;
    if (!keys || resigning) return;
    resigning = true;
    keys
      .reload()
      .then(async (changed) => {
        if (!changed) return;
        const now = new Date(Math.floor(Date.now() / 1000) * 1000);
        card = await signPublished(card, keys.signers(), `${url}${CARD_JWKS_PATH}`, now);
        http.publish(card, signing, keys);
        logger.info(
          { kids: keys.signers().map((s) => s.kid) },
          'agent card: signed again with the keys now published',
        );
      })
      .catch((err: unknown) => logger.error({ err }, 'agent card: reloading its signing keys failed'))
      .finally(() => {
        resigning = false;
      });
  }
  const dispatcher = pushDispatcher(backend, config, signing, logger);
  backend.journal.onPushQueued(() => dispatcher.nudge());
  backend.runner.start();
  backend.remoteRuns.start();
  backend.sweeper.start();
  dispatcher.start();
  const line = listeningLine(backend, config, url, grpcFace, listen);
  logger.info(line.fields, line.message);
  const metrics = await startMetricsSide(backend, config, logger).catch(async (err: Error) => {
    await orderedStop({ backend, http, grpc, dispatcher, keysReload }, config, logger)();
    throw err;
  });
  const close = orderedStop({ backend, http, grpc, dispatcher, keysReload, metrics }, config, logger);
  return {
    url,
    port,
    grpcPort: grpc?.port,
    skills: offered.map((s) => ({ id: s.skill.id, from: s.from })),
    handler: http.listener,
    close,
  };
}

const bracketed = (host: string): string => (host.includes(':') ? `[${host}]` : host);

/** Webhook delivery over the store's outbox, signed with the agent's keys. */
function pushDispatcher(backend: Backend, config: Config, keys: SigningKeys, logger: Logger): PushDispatcher {
  return new PushDispatcher({
    store: backend.store,
    keys,
    render: renderNotification,
    artifactUrl: backend.engine.artifactUrl,
    policy: backend.pushPolicy,
    secrets: backend.secrets,
    timeoutMs: config.PUSH_TIMEOUT_MS,
    maxAgeMs: config.PUSH_MAX_AGE_MS,
    retryBaseMs: config.PUSH_RETRY_MS,
    retryMaxMs: config.PUSH_RETRY_MAX_MS,
    dnsMaxAttempts: config.PUSH_DNS_MAX_ATTEMPTS,
    concurrency: config.PUSH_CONCURRENCY,
    pollMs: config.PUSH_POLL_MS,
    clock: backend.engine.now,
    logger,
    observer: backend.metrics?.push,
  });
}

/**
 * The A2A gRPC binding on GRPC_PORT, over the HTTP side's request handler, when it is set. Loaded only
 * then: the gRPC runtime is not free to load.
 */
export async function startGrpcSide(
  config: Config,
  http: HttpSide,
  backend: Pick<Backend, 'admit' | 'engine'>,
  logger: Logger,
): Promise<GrpcSide | undefined> {
  if (config.GRPC_PORT === undefined) return undefined;
  const { startGrpc } = await import('../faces/a2a/grpc.js');
  const limits = {
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxJsonDepth: config.MAX_JSON_DEPTH,
    keepAliveMs: config.SSE_KEEPALIVE_MS,
  };
  const listen = {
    host: config.HOST,
    port: config.GRPC_PORT,
    tlsCertFile: config.GRPC_TLS_CERT_FILE,
    tlsKeyFile: config.GRPC_TLS_KEY_FILE,
    allowPlaintext: config.GRPC_ALLOW_PLAINTEXT === 'true',
  };
  return startGrpc(listen, {
    handler: http.handler,
    engine: backend.engine,
    // The port listens now, the card (which names it) is made after: calls wait for it.
    serving: http.published,
    tasks: http.tasks,
    admit: backend.admit,
    logger,
    shutdown: http.shutdown.signal,
    ...limits,
  });
}

/** The metrics' own listener on METRICS_PORT, when it is set; logs where it serves. */
async function startMetricsSide(
  backend: Backend,
  config: Config,
  logger: Logger,
): Promise<Server | undefined> {
  if (!backend.metrics || config.METRICS_PORT === undefined) return undefined;
  const serve = metricsEndpoint(backend.metrics.registry, config.METRICS_TOKEN, logger);
  const { server, port } = await listenMetrics(serve, config.HOST, config.METRICS_PORT);
  const url = `http://${bracketed(config.HOST)}:${port}/metrics`;
  logger.info({ metrics: { url, token: config.METRICS_TOKEN !== undefined } }, `metrics served at ${url}`);
  return server;
}

/** Listens on HOST:PORT; resolves with the bound port (PORT=0 picks one). */
function listenOn(server: Server, config: Config): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new ConfigError(
          `${config.given('HOST')} ${config.given('PORT')}: cannot listen (${err.code ?? err.message})`,
        ),
      ),
    );
    server.listen(config.PORT, config.HOST, () => resolve((server.address() as AddressInfo).port));
  });
}
