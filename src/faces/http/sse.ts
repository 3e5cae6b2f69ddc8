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
  beat(): void;
}

/** The streams of one keep-alive period, and its timer. */
interface Beats {
  keepAliveMs: number;
  timer: NodeJS.Timeout;
  streams: Set<Beat>;
}

/**
 * One timer per keep-alive period for all the streams that use it, not one per stream (ten
 * thousand subscribers held ten thousand timers). A stream's first comment comes within one
 * period of its start, then one each period.
 */
const beats = new Map<number, Beats>();

/** A stream joins its period's beats; it counts as open (the metrics) until it leaves them. */
function join(keepAliveMs: number, beat: Beat): Beats {
  let group = beats.get(keepAliveMs);
  if (!group) {
    const streams = new Set<Beat>();
    const timer = setInterval(() => {
      for (const b of streams) b.beat();
    }, keepAliveMs);
    timer.unref();
    group = { keepAliveMs, timer, streams };
    beats.set(keepAliveMs, group);
  }
  group.streams.add(beat);
  openStreams.sse++;
  return group;
}

function leave(group: Beats, beat: Beat): void {
  openStreams.sse--;
  group.streams.delete(beat);
  if (group.streams.size > 0 || beats.get(group.keepAliveMs) !== group) return;
  clearInterval(group.timer);
  beats.delete(group.keepAliveMs);
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
  markStream(res);
  const beat: Beat = {
    beat() {
      if (!res.writableEnded) write(KEEP_ALIVE);
      onTick?.();
    },
  };
  const group = join(keepAliveMs, beat);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    leave(group, beat);
  };
  res.once('close', stop);
  return stop;
}

const KEEP_ALIVE = ': keep-alive\n\n';

/** Where a response finds its writer when it closes: one listener for every stream, no closure each. */
const WRITER = Symbol('taskhandle.sse-writer');
type Written = ServerResponse & { [WRITER]?: SseWriter };
let stopWriter: (writer: SseWriter) => void;

function gone(this: ServerResponse): void {
  const writer = (this as Written)[WRITER];
  if (writer) stopWriter(writer);
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
export class SseWriter implements Beat {
  readonly #res: ServerResponse;
  readonly #beats: Beats;
  readonly #onKeepAlive: (() => void) | undefined;
  readonly #onClose: (() => void) | undefined;
  #closed = false;

  constructor(res: ServerResponse, keepAliveMs: number, o: SseOptions = {}) {
    this.#res = res;
    this.#onClose = o.onClose;
    this.#onKeepAlive = o.onKeepAlive;
    // The headers leave at once (a client sees the stream open), in the same write as whatever event
    // follows in this turn (the task's snapshot, usually): one system call for both, not two.
    res.cork();
    res.writeHead(200, { ...SSE_HEADERS, ...o.headers });
    res.flushHeaders();
    process.nextTick(() => res.uncork());
    markStream(res);
    this.#beats = join(keepAliveMs, this);
    // One listener function for every stream (a `once` costs a wrapper and its state, per stream).
    (res as Written)[WRITER] = this;
    if (res.closed) this.#stop();
    else res.on('close', gone);
  }

  static {
    stopWriter = (writer) => writer.#stop();
  }

  /** A tick of the keep-alive period: a comment, and the stream's own work at it. */
  beat(): void {
    if (!this.#res.writableEnded) this.#write(KEEP_ALIVE);
    this.#onKeepAlive?.();
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
    leave(this.#beats, this);
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
