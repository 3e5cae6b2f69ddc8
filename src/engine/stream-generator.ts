import type { EngineContext } from './context.js';
import type { StreamItem, StreamOptions } from './streams.js';
import { type StreamSink, subscribe } from './subscription.js';

/**
 * The task's stream as an async generator, for callers that pull: the SDK's transports (which
 * iterate the request handler's generators), operators. A subscription whose sink holds each
 * item until the generator is asked for the next, so a slow reader holds the stream where it is.
 * Faces that write frames themselves subscribe directly (subscription.ts): this costs a generator,
 * the signal's listener and a promise per item, per stream.
 */
export async function* stream(
  core: EngineContext,
  owner: string,
  id: string,
  o: StreamOptions,
): AsyncGenerator<StreamItem> {
  const pull = new Pull();
  const handle = subscribe(core, owner, id, o, pull);
  const stop = () => {
    handle.close();
    pull.end();
  };
  o.signal.addEventListener('abort', stop, { once: true });
  if (o.signal.aborted) stop();
  try {
    for (;;) {
      const item = await pull.next();
      if (item === undefined) return;
      yield item;
    }
  } finally {
    o.signal.removeEventListener('abort', stop);
    handle.close();
  }
}

/** One item at a time between a subscription and the generator that reads it. */
class Pull implements StreamSink {
  #item: StreamItem | undefined;
  #taken: (() => void) | undefined;
  #wake: (() => void) | undefined;
  #ended = false;
  #error: unknown;

  item(item: StreamItem): Promise<void> {
    this.#item = item;
    this.#wake?.();
    return new Promise<void>((taken) => {
      this.#taken = taken;
    });
  }

  end(err?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = err;
    this.#wake?.();
  }

  /** The next item, or undefined at the end; asking for it lets the subscription go on. */
  async next(): Promise<StreamItem | undefined> {
    this.#taken?.();
    this.#taken = undefined;
    while (this.#item === undefined) {
      if (this.#ended) {
        if (this.#error !== undefined) throw this.#error;
        return undefined;
      }
      await new Promise<void>((wake) => {
        this.#wake = wake;
      });
      this.#wake = undefined;
    }
    const item = this.#item;
    this.#item = undefined;
    return item;
  }
}
