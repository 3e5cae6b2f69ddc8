import { format } from 'node:util';
import type { Logger } from 'pino';

/** Past this many characters a dependency's message is cut: a request path must not make a huge line. */
const MAX_TEXT = 8192;

type Level = 'debug' | 'info' | 'warn' | 'error';

/**
 * Makes every line the process writes one pino record. Dependencies (the A2A SDK above all) write
 * request data with `console.*` verbatim: a path holding `%0A{"audit":...}` would otherwise put a
 * forged record on the log. Their text becomes the `args` field of a record, escaped like any other
 * value, so it can never start a line of its own. Node's process warnings are routed the same way.
 * Call once, at the start of `serve`; the CLI's client commands keep their plain output.
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

  // Node's own listener prints warnings (deprecations, MaxListeners...) as raw text on stderr.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    logger.warn(
      {
        source: 'process',
        warning: { name: warning.name, code: codeOf(warning), message: bounded(warning.message) },
      },
      'process warning',
    );
  });
}

function bounded(text: string): string {
  return text.length <= MAX_TEXT
    ? text
    : `${text.slice(0, MAX_TEXT)}... (${text.length - MAX_TEXT} more characters)`;
}

function codeOf(warning: Error): string | undefined {
  const code = (warning as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? code : undefined;
}
