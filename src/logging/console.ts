import { format } from 'node:util';
import type { Logger } from 'pino';

/** Past this many characters a dependency's message is cut: a request path must not make a huge line. */
const MAX_TEXT = 8192;

type Level = 'debug' | 'info' | 'warn' | 'error';

/**
 * Makes every line the process writes one pino record. Dependencies (the A2A SDK above all) write
 * request data with `console.*` verbatim: a path holding `%0A{"audit":...}` would otherwise put a
 * forged record on the log. Their text becomes the `args` field of a record, escaped like any other
 * value, so it can never start a line of its own. Node's process warnings are routed the same way
 * (`{source: 'process', warning}`, with the stack under `--trace-warnings`). Call once, at the start
 * of `serve` (logging/route.ts); the CLI's client commands keep their plain output.
 *
 * @example routeConsoleToLogger(logger); console.warn('Tenant "x\n{...}"'); // one JSON line
 */
export function routeConsoleToLogger(logger: Logger): void {
  const to =
    (level: Level) =>
    (...args: unknown[]): void => {
      logger[level](
        { source: 'console', args: bounded(format(...args)) },
        'a dependency wrote to the console',
      );
    };
  console.log = to('info');
  console.info = to('info');
  console.debug = to('debug');
  console.warn = to('warn');
  console.error = to('error');
  // console.trace and console.assert print through console.error/warn; dir and table write directly.
  console.trace = (...args: unknown[]) => to('error')(...args, new Error('trace').stack);
  console.dir = (item: unknown) => to('info')(item);
  console.table = (data: unknown) => to('info')(data);

  // Node's own listener prints warnings (deprecations, MaxListeners, ExperimentalWarning...) as raw
  // text on stderr. It is an ordinary 'warning' listener (added at start unless --no-warnings or
  // NODE_NO_WARNINGS=1): removed, it prints nothing, and the event still comes (seen on Node 20 by
  // spec-tests/log-lines.test.ts: a warning in a running server leaves stderr empty).
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    const detail = (warning as { detail?: unknown }).detail;
    logger.warn(
      {
        source: 'process',
        warning: {
          name: warning.name,
          code: codeOf(warning),
          message: bounded(warning.message),
          ...(typeof detail === 'string' ? { detail: bounded(detail) } : {}),
          // What `node --trace-warnings` adds to Node's own printout.
          ...(tracingWarnings() && warning.stack ? { stack: bounded(warning.stack) } : {}),
        },
      },
      'process warning',
    );
  });
}

/** `node --trace-warnings` (process.traceProcessWarnings, not in @types/node 20). */
const tracingWarnings = (): boolean =>
  (process as { traceProcessWarnings?: boolean }).traceProcessWarnings === true;

/** `text`, cut past MAX_TEXT characters, saying how many were left out. */
export function bounded(text: string): string {
  return text.length <= MAX_TEXT
    ? text
    : `${text.slice(0, MAX_TEXT)}... (${text.length - MAX_TEXT} more characters)`;
}

function codeOf(warning: Error): string | undefined {
  const code = (warning as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? code : undefined;
}
