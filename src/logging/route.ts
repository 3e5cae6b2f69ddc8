import type { Logger } from 'pino';
import { routeConsoleToLogger } from './console.js';
import { routeGrpcToLogger } from './grpc.js';
import { type RawOutput, routeStreamsToLogger } from './streams.js';

export type { RawOutput } from './streams.js';

/**
 * From here on, every line the process writes from JavaScript is one pino record of `logger`:
 * `console.*` (`source: 'console'`), Node's process warnings (`'process'`), grpc-js's logger
 * (`'grpc'`), and anything else written to `process.stdout` / `process.stderr` (`'stdout'`,
 * `'stderr'`: skills modules, the `debug` module, worker threads). What is written to the file
 * descriptors from outside JavaScript cannot be routed (docs/SECURITY.md). Call once, in `serve`,
 * right after the logger is made; returns the streams' own writes (the refused start's message).
 */
export function routeOutputToLogger(logger: Logger): RawOutput {
  routeConsoleToLogger(logger);
  routeGrpcToLogger(logger);
  return routeStreamsToLogger(logger);
}
