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
 * How long the fair share remembers when a tenant or an owner last got a slot: one idle longer
 * competes as one never served (the turns only break ties), and the table does not grow with every
 * principal that ever ran a task.
 */
const TURN_MEMORY_MS = 86_400_000;

/**
 * Deletes tasks whose retention (ttlMs from creation) has passed, and the fair share's turns of
 * tenants and owners idle for a day. Lookups already treat an expired task as not found; the
 * sweeper reclaims the space.
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
      await store.forgetTurns(clock() - TURN_MEMORY_MS);
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
