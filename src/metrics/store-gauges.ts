import { Gauge, type Registry } from 'prom-client';
import type { StoreStats, TaskStore } from '../engine/store-port.js';

/** A scrape within this long of the last store read reuses it: scrapers at once cost one read. */
const CACHE_MS = 1000;

/** What the store gauges read besides the store: this instance's running jobs. */
export interface StoreGaugeSources {
  store: TaskStore;
  /** Jobs this instance runs now. */
  activeJobs: () => number;
  /** Remote workers' claims waiting on this instance now, per skill they wait for. */
  waitingClaims: () => ReadonlyMap<string, number>;
  clock: () => number;
  /** Told when the store could not be read (the scrape then goes on without those gauges). */
  failed: (err: unknown) => void;
}

/**
 * Gauges read at scrape time. Those the store holds for every instance (tasks by state, the
 * outbox) carry `scope="cluster"`: each instance of a cluster exports the same value, so a query
 * takes `max` of them, never a `sum`. Those of this instance (its jobs, its pool, its WAL file)
 * carry `scope="instance"`.
 */
export function storeGauges(registry: Registry, sources: StoreGaugeSources): void {
  const registers = [registry];
  let cached: { at: number; stats: Promise<StoreStats | undefined> } | undefined;
  // Undefined when the store cannot be read: the other metrics are still served (a failed scrape
  // would look like a dead process), and a failed read is not kept: the next scrape tries again.
  const stats = (): Promise<StoreStats | undefined> => {
    const now = sources.clock();
    if (!cached || now - cached.at >= CACHE_MS) {
      const entry: { at: number; stats: Promise<StoreStats | undefined> } = {
        at: now,
        stats: sources.store.stats().catch((err: unknown) => {
          sources.failed(err);
          if (cached === entry) cached = undefined;
          return undefined;
        }),
      };
      cached = entry;
    }
    return cached.stats;
  };
  new Gauge({
    name: 'taskhandle_tasks',
    help: 'Tasks in the store by state (queued: submitted; running: working; waiting for people: input-required); the same on every instance',
    labelNames: ['state', 'scope'],
    registers,
    async collect() {
      const tasks = (await stats())?.tasks;
      if (!tasks) return this.reset();
      for (const [state, n] of Object.entries(tasks)) this.set({ state, scope: 'cluster' }, n);
    },
  });
  new Gauge({
    name: 'taskhandle_push_outbox_depth',
    help: 'Webhook notifications still to deliver (dead-lettered ones excluded); the same on every instance',
    labelNames: ['scope'],
    registers,
    async collect() {
      const outbox = (await stats())?.outbox;
      if (!outbox) return this.reset();
      this.set({ scope: 'cluster' }, outbox.depth);
    },
  });
  new Gauge({
    name: 'taskhandle_push_outbox_oldest_age_seconds',
    help: 'Age of the oldest notification still to deliver (0 when none); the same on every instance',
    labelNames: ['scope'],
    registers,
    async collect() {
      const outbox = (await stats())?.outbox;
      if (!outbox) return this.reset();
      const { oldestAt } = outbox;
      this.set(
        { scope: 'cluster' },
        oldestAt === undefined ? 0 : Math.max(0, sources.clock() - oldestAt) / 1000,
      );
    },
  });
  new Gauge({
    name: 'taskhandle_running_jobs',
    help: 'Jobs this instance runs now',
    labelNames: ['scope'],
    registers,
    collect() {
      this.set({ scope: 'instance' }, sources.activeJobs());
    },
  });
  new Gauge({
    name: 'taskhandle_worker_claims_waiting',
    help: "Remote workers' claims (long polls) waiting on this instance now, by skill they wait for: the idle workers",
    labelNames: ['skill', 'scope'],
    registers,
    collect() {
      this.reset();
      for (const [skill, n] of sources.waitingClaims()) this.set({ skill, scope: 'instance' }, n);
    },
  });
  new Gauge({
    name: 'taskhandle_store_pool_connections',
    help: "PostgreSQL: this instance's pool, connections in use and idle, and queries waiting for one",
    labelNames: ['state', 'scope'],
    registers,
    async collect() {
      const pool = (await stats())?.pool;
      if (!pool) return this.reset();
      this.set({ state: 'in-use', scope: 'instance' }, pool.total - pool.idle);
      this.set({ state: 'idle', scope: 'instance' }, pool.idle);
      this.set({ state: 'waiting', scope: 'instance' }, pool.waiting);
    },
  });
  new Gauge({
    name: 'taskhandle_sqlite_wal_bytes',
    help: "SQLite: the write-ahead log's size on disk",
    labelNames: ['scope'],
    registers,
    async collect() {
      const walBytes = (await stats())?.walBytes;
      if (walBytes === undefined) return this.reset();
      this.set({ scope: 'instance' }, walBytes);
    },
  });
}
