import type { ServerResponse } from 'node:http';

/** Counts requests still being answered, so that shutdown can let them finish before cutting sockets. */
export class InFlight {
  #count = 0;
  #idle: (() => void) | undefined;

  // One listener for every response ('close' comes once): a `once` costs a wrapper and its state each.
  readonly #closed = () => {
    this.#count--;
    if (this.#count === 0) this.#idle?.();
  };

  track(res: ServerResponse): void {
    this.#count++;
    res.on('close', this.#closed);
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.#idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
