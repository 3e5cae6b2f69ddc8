import type { ServerResponse } from 'node:http';
import type { Engine } from '../../engine/engine.js';
import type { StreamItem, SubscribeOptions } from '../../engine/streams.js';
import type { StreamHandle, StreamSink } from '../../engine/subscription.js';
import { openUntil } from './open-subscriptions.js';
import { SseWriter, untilDrained } from './sse.js';

/**
 * One SSE response that a face holds open over engine subscriptions, until they end, the client
 * leaves or the server stops: what every such stream does at those moments, in one place. The
 * client leaving releases the subscriptions and writes nothing more; shutdown releases them and
 * lets the stream end as it would by itself ({@link finish}: its last message, then the end).
 * It is registered with the shutdown's one set of open streams, never a listener of its own.
 */
export abstract class HeldStream<Res extends ServerResponse = ServerResponse> {
  protected readonly res: Res;
  protected sse: SseWriter | undefined;
  readonly #keepAliveMs: number;
  readonly #shutdown: AbortSignal;
  /** Items being made (their reads awaited): the stream's last word waits for them. */
  #writing = 0;
  #last: (() => void) | undefined;

  constructor(res: Res, keepAliveMs: number, shutdown: AbortSignal) {
    this.res = res;
    this.#keepAliveMs = keepAliveMs;
    this.#shutdown = shutdown;
  }

  /** Closes the subscriptions it holds (idempotent) and gives back what they hold. */
  protected abstract release(): void;

  /** The stream's end once it has nothing more to follow: the end of the response, unless it has a last word. */
  protected finish(_err?: unknown): void {
    (this.sse as SseWriter).end();
  }

  /** Counts among the open streams that shutdown ends; ended at once if the server is stopping. */
  protected hold(): void {
    openUntil(this.#shutdown).add(this);
  }

  /** The response becomes an SSE stream; once its client has gone, everything is released. */
  protected openSse(): SseWriter {
    this.sse = new SseWriter(this.res, this.#keepAliveMs, { onClose: () => this.#gone() });
    return this.sse;
  }

  /** The server stops: an unopened stream opens to end at once. */
  close(): void {
    if (!this.sse) this.openSse();
    this.stop();
  }

  /** Nothing more to follow: released, and ended with the stream's last word unless its client has gone. */
  protected stop(err?: unknown): void {
    openUntil(this.#shutdown).delete(this);
    this.release();
    if (!this.sse || this.sse.closed) return;
    if (this.#writing === 0) this.finish(err);
    else this.#last = () => this.finish(err);
  }

  /** An item's write that waits for reads: what the stream shows before its last word (shutdown). */
  protected writing<T>(pending: Promise<T>): Promise<T> {
    this.#writing++;
    return pending.finally(() => {
      if (--this.#writing > 0) return;
      const last = this.#last;
      this.#last = undefined;
      last?.();
    });
  }

  /** Writes one event; a promise while the client is not reading (see {@link drained}). */
  protected send(data: unknown, id?: number | string): undefined | Promise<void> {
    this.sse?.send(data, id);
    return this.drained();
  }

  /**
   * A promise while the client is not reading what was written: a sink returns it so that its
   * subscription holds the stream there (the store keeps the rest), not in the server's memory.
   */
  protected drained(): undefined | Promise<void> {
    return this.res.writableNeedDrain ? untilDrained(this.res) : undefined;
  }

  #gone(): void {
    openUntil(this.#shutdown).delete(this);
    this.release();
  }
}

/**
 * A {@link HeldStream} of one task: the sink of its engine subscription. {@link start} resolves
 * once the stream is open (it then lives on its own) and rejects with a refusal (no such task of
 * the caller's, MAX_STREAMS, a task already terminal when that is refused), which the face answers
 * in its own shape, not as an SSE stream that ends at once.
 */
export abstract class TaskStream<Res extends ServerResponse = ServerResponse>
  extends HeldStream<Res>
  implements StreamSink
{
  #handle: StreamHandle | undefined;
  #opened: (() => void) | undefined;
  #refused: ((err: unknown) => void) | undefined;

  /** Subscribes this sink to the task's stream. */
  protected start(engine: Engine, owner: string, id: string, options: SubscribeOptions): Promise<void> {
    return new Promise((opened, refused) => {
      this.#opened = opened;
      this.#refused = refused;
      this.#handle = engine.subscribe(owner, id, options, this);
      this.hold();
    });
  }

  open(): void {
    this.openSse();
  }

  abstract item(item: StreamItem): undefined | Promise<unknown>;

  /** Its last event was sent, or the task vanished (expired) or the store closed mid-stream; before open(), a refusal. */
  end(err?: unknown): void {
    if (this.sse) this.stop(err);
    else {
      this.stop();
      this.#refused?.(err);
    }
  }

  protected override openSse(): SseWriter {
    const sse = super.openSse();
    this.#opened?.();
    this.#opened = undefined;
    this.#refused = undefined;
    return sse;
  }

  protected release(): void {
    this.#handle?.close();
  }
}
