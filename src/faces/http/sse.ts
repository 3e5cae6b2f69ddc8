import type { ServerResponse } from 'node:http';
import { markStream, openStreams } from './open-streams.js';

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/**
 * Writes a keep-alive comment every `keepAliveMs` (so proxies keep an idle stream open) until the
 * response closes or the returned function is called; `onTick` runs at each one too.
 */
export function keepAlive(
  res: ServerResponse,
  keepAliveMs: number,
  write: (text: string) => unknown,
  onTick?: () => void,
): () => void {
  const timer = setInterval(() => {
    if (!res.writableEnded) write(': keep-alive\n\n');
    onTick?.();
  }, keepAliveMs);
  timer.unref();
  markStream(res);
  openStreams.sse++;
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    openStreams.sse--;
    clearInterval(timer);
  };
  res.once('close', stop);
  return stop;
}

export interface SseOptions {
  /** Headers besides the SSE ones (or replacing them: `Cache-Control`). */
  headers?: Record<string, string>;
  /** Runs at each keep-alive (a stream that also polls for changes). */
  onKeepAlive?: () => void;
}

/**
 * One Server-Sent Events response: events carry an `id:` (the task log's sequence number) so a
 * client can resume with Last-Event-ID; a comment every `keepAliveMs` keeps proxies from closing
 * an idle stream. After the client has gone, writes are no-ops.
 */
export class SseWriter {
  readonly #res: ServerResponse;
  readonly #stopKeepAlive: () => void;
  #closed = false;

  constructor(res: ServerResponse, keepAliveMs: number, o: SseOptions = {}) {
    this.#res = res;
    res.writeHead(200, { ...SSE_HEADERS, ...o.headers });
    res.flushHeaders();
    this.#stopKeepAlive = keepAlive(res, keepAliveMs, (text) => this.#write(text), o.onKeepAlive);
    res.once('close', () => this.#stop());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes one event (of type `event`, when given); returns false once the client has gone. */
  send(data: unknown, id?: number | string, event?: string): boolean {
    const head = `${id === undefined ? '' : `id: ${id}\n`}${event === undefined ? '' : `event: ${event}\n`}`;
    return this.#write(`${head}data: ${JSON.stringify(data)}\n\n`);
  }

  /** Writes an event with an id and no data: a resume point before anything else is sent. */
  prime(id: string): boolean {
    return this.#write(`id: ${id}\ndata:\n\n`);
  }

  /** Writes a comment line (clients ignore it; it shows the stream is alive). */
  comment(text: string): boolean {
    return this.#write(`: ${text}\n\n`);
  }

  /** Resolves once the client has taken what was written (or has gone): await it between events. */
  drained(): Promise<void> {
    return untilDrained(this.#res);
  }

  end(): void {
    if (!this.#closed) this.#res.end();
    this.#stop();
  }

  #write(text: string): boolean {
    if (this.#closed || this.#res.writableEnded) return false;
    this.#res.write(text);
    return true;
  }

  #stop(): void {
    this.#closed = true;
    this.#stopKeepAlive();
  }
}

/**
 * Resolves once `res` has room in its buffer again, or is gone. Streams await it between events, so
 * that a client that stops reading holds the stream where it is instead of filling server memory.
 */
export function untilDrained(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
