import type { Logger } from 'pino';
import type { TaskStore } from './store-port.js';

export interface SweeperOptions {
  store: TaskStore;
  intervalMs: number;
  /** Deleted per statement, so a large backlog never holds the store for long. */
  batch: number;
  clock: () => number;
  logger: Logger;
}

/**
 * Deletes tasks whose retention (ttlMs from creation) has passed. Lookups already treat an expired
 * task as not found; the sweeper reclaims the space.
 */
export class Sweeper {
  readonly #options: SweeperOptions;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<number> | undefined;

  constructor(options: SweeperOptions) {
    this.#options = options;
  }

  start(): void {
    this.#timer = setInterval(() => void this.sweep(), this.#options.intervalMs);
    this.#timer.unref();
  }

  /** One full pass; returns how many tasks it deleted. */
  sweep(): Promise<number> {
    this.#sweeping ??= this.#pass().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  async #pass(): Promise<number> {
    const { store, batch, clock, logger } = this.#options;
    let total = 0;
    try {
      for (;;) {
        const n = await store.deleteExpired(clock(), batch);
        total += n;
        if (n < batch) break;
        await new Promise((r) => setImmediate(r));
      }
      if (total > 0) logger.info({ deleted: total }, 'expired tasks deleted');
    } catch (err) {
      logger.error({ err }, 'retention sweep failed');
    }
    return total;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
  }
}
