import type { Logger } from 'pino';
import { bounded } from './console.js';

type WriteCallback = (err?: Error | null) => void;

/** What the process writes to, past the routing: the refused start's plain message (main.ts). */
export interface RawOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/**
 * Makes each write to `process.stdout` or `process.stderr` one pino record: `{source: 'stdout' |
 * 'stderr', text}` at `info` / `warn`. This is where what bypasses `console` arrives: a skills module's
 * `process.stdout.write`, the `debug` module of express and its router (`DEBUG=express:*`), what a
 * worker thread prints (Node pipes a worker's stdout and stderr into these streams), a `Console` a
 * library made on them before the console was routed. One write is one record (a trailing newline
 * dropped; a write of only white space makes none): text that a program writes in pieces comes as
 * several records. The logger writes to file descriptor 1 itself (pino's destination), not through
 * `process.stdout`; a logger that does write through it is passed on unchanged, never routed into
 * itself. Returns the streams' own writes for the few plain lines meant for the operator.
 *
 * Writes to the file descriptors themselves (`fs.writeSync(2, ...)`, native code, Node's own fatal
 * errors) do not pass here: see docs/SECURITY.md, "What cannot be routed".
 *
 * @example routeStreamsToLogger(logger); process.stderr.write('x\n{"audit":"cancel"}\n'); // one JSON line
 */
export function routeStreamsToLogger(
  logger: Logger,
  streams: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = process,
): RawOutput {
  let inside = false;
  const route = (stream: NodeJS.WritableStream, source: 'stdout' | 'stderr'): ((text: string) => void) => {
    const original = stream.write.bind(stream) as (chunk: string | Uint8Array, cb?: WriteCallback) => boolean;
    const level = source === 'stdout' ? 'info' : 'warn';
    stream.write = ((
      chunk: string | Uint8Array,
      encoding?: BufferEncoding | WriteCallback,
      callback?: WriteCallback,
    ): boolean => {
      const done = typeof encoding === 'function' ? encoding : callback;
      // The logger's own line (a logger that writes through this stream): out as it is.
      if (inside) return original(chunk, done);
      const text = textOf(chunk, typeof encoding === 'string' ? encoding : undefined).replace(/\r?\n$/, '');
      if (text.trim() !== '') {
        inside = true;
        try {
          logger[level]({ source, text: bounded(text) }, `a dependency wrote to ${source}`);
        } finally {
          inside = false;
        }
      }
      if (done) process.nextTick(done, null);
      return true;
    }) as typeof stream.write;
    return (text) => {
      original(text);
    };
  };
  return { stdout: route(streams.stdout, 'stdout'), stderr: route(streams.stderr, 'stderr') };
}

function textOf(chunk: string | Uint8Array, encoding: BufferEncoding | undefined): string {
  if (typeof chunk !== 'string')
    return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString();
  return encoding === undefined || encoding === 'utf8' || encoding === 'utf-8'
    ? chunk
    : Buffer.from(chunk, encoding).toString();
}
