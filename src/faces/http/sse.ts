import type { ServerResponse } from 'node:http';
import { markStream, openStreams } from './open-streams.js';

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
} as const;

/** A stream that wants a keep-alive comment at each tick of its period. */
interface Beat {
  res: ServerResponse;
  write: (text: string) => unknown;
  onTick: (() => void) | undefined;
}

/**
 * One timer per keep-alive period for all the streams that use it, not one per stream (ten
 * thousand subscribers held ten thousand timers). A stream's first comment comes within one
 * period of its start, then one each period.
 */
const beats = new Map<number, { timer: NodeJS.Timeout; streams: Set<Beat> }>();

function join(keepAliveMs: number, beat: Beat): () => void {
  let group = beats.get(keepAliveMs);
  if (!group) {
    const streams = new Set<Beat>();
    const timer = setInterval(() => {
      for (const b of streams) {
        if (!b.res.writableEnded) b.write(': keep-alive\n\n');
        b.onTick?.();
      }
    }, keepAliveMs);
    timer.unref();
    group = { timer, streams };
    beats.set(keepAliveMs, group);
  }
  const own = group;
  own.streams.add(beat);
  return () => {
    own.streams.delete(beat);
    if (own.streams.size > 0 || beats.get(keepAliveMs) !== own) return;
    clearInterval(own.timer);
    beats.delete(keepAliveMs);
  };
}

/** Counts `res` as an open stream until the returned function (which also calls `leave`) runs. */
function counted(res: ServerResponse, leave: () => void): () => void {
  markStream(res);
  openStreams.sse++;
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    openStreams.sse--;
    leave();
  };
}

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
  const stop = counted(res, join(keepAliveMs, { res, write, onTick }));
  res.once('close', stop);
  return stop;
}

export interface SseOptions {
  /** Headers besides the SSE ones (or replacing them: `Cache-Control`). */
  headers?: Record<string, string>;
  /** Runs at each keep-alive (a stream that also polls for changes). */
  onKeepAlive?: () => void;
  /** Runs once when the client has gone (at once, if it went before the stream opened) or at end(). */
  onClose?: () => void;
}

/**
 * One Server-Sent Events response: events carry an `id:` (the task log's sequence number) so a
 * client can resume with Last-Event-ID; a comment every `keepAliveMs` keeps proxies from closing
 * an idle stream. After the client has gone, writes are no-ops.
 */
export class SseWriter {
  readonly #res: ServerResponse;
  readonly #stopKeepAlive: () => void;
  readonly #onClose: (() => void) | undefined;
  #closed = false;

  constructor(res: ServerResponse, keepAliveMs: number, o: SseOptions = {}) {
    this.#res = res;
    this.#onClose = o.onClose;
    // The headers leave at once (a client sees the stream open), in the same write as whatever event
    // follows in this turn (the task's snapshot, usually): one system call for both, not two.
    res.cork();
    res.writeHead(200, { ...SSE_HEADERS, ...o.headers });
    res.flushHeaders();
    process.nextTick(() => res.uncork());
    const beat = { res, write: (text: string) => this.#write(text), onTick: o.onKeepAlive };
    this.#stopKeepAlive = counted(res, join(keepAliveMs, beat));
    // One listener for all of it: each `once` costs a wrapper and its state, per stream.
    if (res.closed) this.#stop();
    else res.once('close', () => this.#stop());
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes one event (of type `event`, when given); returns false once the client has gone. */
  send(data: unknown, id?: number | string, event?: string): boolean {
    return this.sendText(JSON.stringify(data), id, event);
  }

  /** {@link send} with the data already serialized (one JSON text written to many streams). */
  sendText(json: string, id?: number | string, event?: string): boolean {
    const head = `${id === undefined ? '' : `id: ${id}\n`}${event === undefined ? '' : `event: ${event}\n`}`;
    return this.#write(`${head}data: ${json}\n\n`);
  }

  /**
   * Writes the stream's last event and ends the response in one write: a transition that ends ten
   * thousand streams then costs one system call each, not two.
   */
  endWith(json: string, id?: number | string): void {
    this.#res.cork();
    this.sendText(json, id);
    this.end();
    this.#res.uncork();
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
    if (this.#closed) return;
    this.#closed = true;
    this.#stopKeepAlive();
    this.#onClose?.();
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
