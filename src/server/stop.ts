import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config/settings.js';
import type { GrpcSide } from '../faces/a2a/grpc.js';
import type { PushDispatcher } from '../push/dispatcher.js';
import type { Backend } from './backend.js';
import type { HttpSide } from './http.js';

/** At shutdown, how long answers still being written get before their sockets are closed. */
const DRAIN_MS = 2000;

export interface Running {
  backend: Backend;
  http: HttpSide;
  /** The gRPC binding, when GRPC_PORT serves it. */
  grpc?: GrpcSide;
  dispatcher: PushDispatcher;
  /** The timer that picks up rotated signing keys. */
  keysReload: NodeJS.Timeout;
  /** The metrics' own listener (METRICS_PORT), when there is one. */
  metrics?: Server;
}

/**
 * The ordered, idempotent shutdown: no new connections, work released, webhooks stopped, waits and
 * streams ended, answers drained, the store closed last. The returned function caches its promise.
 */
export function orderedStop(parts: Running, config: Config, logger: Logger): () => Promise<void> {
  const { backend, http, grpc, dispatcher, keysReload, metrics } = parts;
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      logger.info('shutting down: no new connections');
      http.stopTaking();
      const closed = new Promise<void>((resolve) => http.server.close(() => resolve()));
      http.server.closeIdleConnections();
      const grpcDrained = grpc?.drain();
      // Waiting claims answer with no task: their workers claim again from another instance.
      backend.remoteRuns.stop();
      await backend.runner.stop(config.SHUTDOWN_TIMEOUT_MS);
      await backend.sweeper.stop();
      clearInterval(keysReload);
      // Deliveries cut short are retried at the next start, once their lease has run out.
      await dispatcher.stop(Math.min(config.SHUTDOWN_TIMEOUT_MS, config.PUSH_TIMEOUT_MS + 1000));
      // Waiting blocking sends now answer with the task as it stands, and open streams end: their
      // clients resume with Last-Event-ID on another instance or after the restart.
      http.shutdown.abort('shutdown');
      await Promise.all([http.inFlight.drained(DRAIN_MS), grpcDrained && within(DRAIN_MS, grpcDrained)]);
      grpc?.close();
      http.server.closeAllConnections();
      await closed;
      // Scraped until here: the last scrape still sees the jobs released and the deliveries stopped.
      if (metrics) {
        const metricsClosed = new Promise<void>((resolve) => metrics.close(() => resolve()));
        metrics.closeAllConnections();
        await metricsClosed;
      }
      await backend.store.close();
      logger.info('stopped');
    })();
    return stopping;
  };
}

/** Waits for `work`, at most `ms`. */
async function within(ms: number, work: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([work, late]);
  clearTimeout(timer);
}
