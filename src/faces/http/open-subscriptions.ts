/** A stream a face holds open: closed at shutdown. */
interface OpenStream {
  close(): void;
}

/** The streams open until a shutdown signal: each one's `close`, called when it aborts. */
export class OpenSubscriptions {
  readonly #streams = new Set<OpenStream>();

  readonly #shutdown: AbortSignal;

  constructor(shutdown: AbortSignal) {
    this.#shutdown = shutdown;
    shutdown.addEventListener('abort', () => {
      for (const stream of [...this.#streams]) stream.close();
    });
  }

  /** Registers a stream; a stream that starts during shutdown ends at once. */
  add(stream: OpenStream): void {
    if (this.#shutdown.aborted) stream.close();
    else this.#streams.add(stream);
  }

  delete(stream: OpenStream): void {
    this.#streams.delete(stream);
  }
}

const bySignal = new WeakMap<AbortSignal, OpenSubscriptions>();

/**
 * The one set of streams that `shutdown` closes: a stream registers there instead of listening to
 * the signal itself (a listener each, ten thousand on one signal).
 */
export function openUntil(shutdown: AbortSignal): OpenSubscriptions {
  let open = bySignal.get(shutdown);
  if (!open) {
    open = new OpenSubscriptions(shutdown);
    bySignal.set(shutdown, open);
  }
  return open;
}
