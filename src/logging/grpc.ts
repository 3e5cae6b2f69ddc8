import { format } from 'node:util';
// grpc-js's logging module alone (what its index re-exports as `setLogger`, the same module
// instance): the whole package costs some 40 ms to load, and only a server with GRPC_PORT (or an
// OTLP gRPC exporter) loads it.
import { setLogger } from '@grpc/grpc-js/build/src/logging.js';
import type { Logger } from 'pino';
import { bounded } from './console.js';

/**
 * grpc-js's messages as pino records at their own level: `{source: 'grpc', args}`. Its default logger
 * prints every message with `console.error` ("E ...", "I ...", "D ..."), so that even its debug
 * traces would be errors. Which messages it makes stays grpc-js's choice: `GRPC_VERBOSITY` (`ERROR`
 * by default; `INFO`, `DEBUG`, `NONE`) and `GRPC_TRACE` (tracers, e.g. `server,channel` or `all`),
 * then LOG_LEVEL filters them as any record.
 */
export function routeGrpcToLogger(logger: Logger): void {
  const at =
    (level: 'error' | 'info' | 'debug') =>
    (...args: unknown[]): void => {
      logger[level]({ source: 'grpc', args: bounded(format(...args)) }, 'grpc-js logged');
    };
  setLogger({ error: at('error'), info: at('info'), debug: at('debug') });
}
