import type { ServerResponse } from 'node:http';

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/**
 * One Server-Sent Events response: events carry an `id:` (the task log's sequence number) so a
 * client can resume with Last-Event-ID; a comment every `keepAliveMs` keeps proxies from closing
 * an idle stream. After the client has gone, writes are no-ops.
 */
export class SseWriter {
  readonly #res: ServerResponse;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(res: ServerResponse, keepAliveMs: number, headers: Record<string, string> = {}) {
    this.#res = res;
    res.writeHead(200, { ...SSE_HEADERS, ...headers });
    res.flushHeaders();
    this.#timer = setInterval(() => this.#write(': keep-alive\n\n'), keepAliveMs);
    this.#timer.unref();
    res.once('close', () => this.#stop());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes one event; returns false once the client has gone. */
  send(data: unknown, id?: number): boolean {
    return this.#write(`${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`);
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
    clearInterval(this.#timer);
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
