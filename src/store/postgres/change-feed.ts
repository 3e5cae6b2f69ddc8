import pg from 'pg';
import type { Logger } from 'pino';
import type { StoreChange } from '../../engine/store-port.js';
import type { TaskState } from '../../engine/task.js';
import { logNotices } from './notices.js';

/**
 * What the statements of this adapter announce with `pg_notify(channel, notice)`: a word per field,
 * `e <instance> <taskId> [<state>]` (the task's log grew) or `c <instance> <taskId>` (cancel
 * requested). Notices are sent at commit, only if the transaction commits.
 */
export const notice = {
  events: (instance: string, taskId: string, state?: TaskState): string =>
    state ? `e ${instance} ${taskId} ${state}` : `e ${instance} ${taskId}`,
  /** The start of an events notice, for statements that append the task id themselves. */
  eventsPrefix: (instance: string): string => `e ${instance} `,
  cancel: (instance: string, taskId: string): string => `c ${instance} ${taskId}`,
};

/** A notice as the store's watchers hear it; undefined for our own notices and unknown ones. */
export function parseNotice(text: string, self: string): StoreChange | undefined {
  const [kind, instance, taskId, state] = text.split(' ');
  if (instance === self || !taskId) return undefined;
  if (kind === 'e') return { kind: 'events', taskId, state: state as TaskState | undefined };
  if (kind === 'c') return { kind: 'cancel-requested', taskId };
  return undefined;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;

/**
 * One connection that LISTENs on the cluster's channel and hands other instances' notices to the
 * watchers. NOTIFY is only a wake-up: if the connection drops, it reconnects with backoff and then
 * tells every watcher `missed`, so that each re-reads the store (the event log is the truth).
 */
export class ChangeFeed {
  readonly #config: pg.ClientConfig;
  readonly #channel: string;
  readonly #instance: string;
  readonly #logger: Logger | undefined;
  readonly #listeners = new Set<(change: StoreChange) => void>();
  #client: pg.Client | undefined;
  #retry: NodeJS.Timeout | undefined;
  #retryMs = RETRY_MIN_MS;
  #closed = false;

  constructor(config: pg.ClientConfig, channel: string, instance: string, logger?: Logger) {
    this.#config = config;
    this.#channel = channel;
    this.#instance = instance;
    this.#logger = logger;
  }

  /** Listens; rejects if the first connection fails (the store does not open then). */
  async start(): Promise<void> {
    await this.#listen();
  }

  watch(listener: (change: StoreChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  async #listen(): Promise<void> {
    const client = new pg.Client(this.#config);
    if (this.#logger) logNotices(client, this.#logger);
    client.on('notification', (n) => {
      const change = n.payload === undefined ? undefined : parseNotice(n.payload, this.#instance);
      if (change) this.#emit(change);
    });
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.#channel}"`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      throw err;
    }
    if (this.#closed) await client.end().catch(() => {});
    else this.#client = client;
  }

  #lost(client: pg.Client, err?: Error): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    this.#logger?.warn({ err }, 'store: lost the connection that hears other instances; reconnecting');
    client.end().catch(() => {});
    this.#reconnect();
  }

  #reconnect(): void {
    this.#retry = setTimeout(() => {
      this.#listen().then(
        () => {
          this.#retryMs = RETRY_MIN_MS;
          this.#logger?.info('store: hearing other instances again');
          this.#emit({ kind: 'missed' });
        },
        (err: unknown) => {
          if (this.#closed) return;
          this.#logger?.warn({ err, retryMs: this.#retryMs }, 'store: reconnecting the change feed failed');
          this.#retryMs = Math.min(RETRY_MAX_MS, this.#retryMs * 2);
          this.#reconnect();
        },
      );
    }, this.#retryMs);
    this.#retry.unref();
  }

  #emit(change: StoreChange): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(change);
      } catch (err) {
        this.#logger?.error({ err }, 'store: a change listener failed');
      }
    }
  }
}
