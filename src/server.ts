import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, pino } from 'pino';
import { type Config, ConfigError } from './config/settings.js';
import type { Engine } from './engine/engine.js';
import type { AnySkill } from './engine/skill.js';
import { publishCard } from './faces/a2a/agent-card.js';
import type { GrpcSide } from './faces/a2a/grpc.js';
import { renderNotification } from './faces/a2a/push-body.js';
import { listenMetrics, metricsEndpoint } from './metrics/endpoint.js';
import { PushDispatcher } from './push/dispatcher.js';
import { SigningKeys } from './push/signing-keys.js';
import { buildCore, type Core } from './server/core.js';
import { buildHttp, type HttpSide } from './server/http.js';
import { listeningLine } from './server/listening.js';
import { orderedStop } from './server/stop.js';
import { setAgentName } from './telemetry/tracing.js';
import { installZodWords } from './words/zod-words.js';

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

/** How often keys rotated by `taskhandle keys rotate` (another process) are picked up. */
const KEYS_RELOAD_MS = 10_000;

/**
 * The composition root: the core (store -> engine -> runner, server/core.ts), the faces over it
 * (server/http.ts), then listening, the agent card, webhook delivery, and the ordered stop (server/stop.ts).
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { config } = options;
  installZodWords();
  const logger = options.logger ?? pino({ level: config.LOG_LEVEL, base: { service: 'taskhandle' } });
  const core = await buildCore(config, options.skills ?? [], logger);
  const { engine, store } = core;
  const http = buildHttp(core, config, logger);
  const port = await listen(http.server, config).catch(async (err: Error) => {
    await store.close();
    throw err;
  });
  const url =
    config.PUBLIC_URL ?? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`;
  core.setBaseUrl(url);
  const grpc = await startGrpcSide(config, http, core.admit, logger).catch(async (err: Error) => {
    http.server.close();
    await store.close();
    throw err;
  });
  // The card's gRPC target: the public URL's host (clients dial that) and the gRPC port.
  const grpcFace = grpc && { address: `${new URL(url).hostname}:${grpc.port}`, tls: grpc.tls };
  const card = publishCard(
    config.AGENT_CARD_FILE,
    url,
    core.skills.all(),
    {
      apiKeys: config.API_KEYS_FILE !== undefined,
      jwt: config.JWT_ISSUER !== undefined,
      extendedSkills: core.extendedSkills,
    },
    grpcFace?.address,
  );
  const signing = await SigningKeys.open(config.keysDir, { issuer: url, logger }).catch(
    async (err: Error) => {
      http.server.close();
      grpc?.close();
      await store.close();
      throw new ConfigError(`KEYS_DIR=${config.keysDir}: cannot use the signing keys (${err.message})`);
    },
  );
  http.publish(card, signing);
  setAgentName(card.sdk.name);
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
    secrets: core.secrets,
    timeoutMs: config.PUSH_TIMEOUT_MS,
    maxAgeMs: config.PUSH_MAX_AGE_MS,
    retryBaseMs: config.PUSH_RETRY_MS,
    retryMaxMs: config.PUSH_RETRY_MAX_MS,
    dnsMaxAttempts: config.PUSH_DNS_MAX_ATTEMPTS,
    concurrency: config.PUSH_CONCURRENCY,
    pollMs: config.PUSH_POLL_MS,
    clock: engine.now,
    logger,
    observer: core.metrics?.push,
  });
  core.journal.onPushQueued(() => dispatcher.nudge());
  core.runner.start();
  core.sweeper.start();
  dispatcher.start();
  const line = listeningLine(core, config, url, grpcFace);
  logger.info(line.fields, line.message);
  const metrics = await startMetricsSide(core, config, logger).catch(async (err: Error) => {
    await orderedStop({ core, http, grpc, dispatcher, keysReload }, config, logger)();
    throw err;
  });
  const stop = orderedStop({ core, http, grpc, dispatcher, keysReload, metrics }, config, logger);
  return { url, port, engine, logger, stop };
}

/**
 * The A2A gRPC binding on GRPC_PORT, over the HTTP side's request handler, when it is set. Loaded only
 * then: the gRPC runtime is not free to load.
 */
async function startGrpcSide(
  config: Config,
  http: HttpSide,
  admit: Core['admit'],
  logger: Logger,
): Promise<GrpcSide | undefined> {
  if (config.GRPC_PORT === undefined) return undefined;
  const { startGrpc } = await import('./faces/a2a/grpc.js');
  const limits = {
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxJsonDepth: config.MAX_JSON_DEPTH,
    keepAliveMs: config.SSE_KEEPALIVE_MS,
  };
  return startGrpc(config, {
    handler: http.handler,
    admit,
    logger,
    shutdown: http.shutdown.signal,
    ...limits,
  });
}

/** The metrics' own listener on METRICS_PORT, when it is set; logs where it serves. */
async function startMetricsSide(core: Core, config: Config, logger: Logger): Promise<Server | undefined> {
  if (!core.metrics || config.METRICS_PORT === undefined) return undefined;
  const serve = metricsEndpoint(core.metrics.registry, config.METRICS_TOKEN, logger);
  const { server, port } = await listenMetrics(serve, config.HOST, config.METRICS_PORT);
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  const url = `http://${host}:${port}/metrics`;
  logger.info({ metrics: { url, token: config.METRICS_TOKEN !== undefined } }, `metrics served at ${url}`);
  return server;
}

/** Listens on HOST:PORT; resolves with the bound port (PORT=0 picks one). */
function listen(server: Server, config: Config): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new ConfigError(
          `HOST=${config.HOST} PORT=${config.PORT}: cannot listen (${err.code ?? err.message})`,
        ),
      ),
    );
    server.listen(config.PORT, config.HOST, () => resolve((server.address() as AddressInfo).port));
  });
}
