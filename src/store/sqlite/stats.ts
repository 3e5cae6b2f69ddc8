import { stat } from 'node:fs/promises';
import type Database from 'better-sqlite3';
import type { StoreStats } from '../../engine/store-port.js';

// Each count names its state exactly as the partial index does: SQLite uses a partial index only
// for the very term in its WHERE clause, so these read the active tasks, never the stored ones.
const SQL = {
  submitted: "SELECT count(*) AS n FROM tasks WHERE state = 'submitted'",
  working: "SELECT count(*) AS n FROM tasks WHERE state = 'working'",
  inputRequired: "SELECT count(*) AS n FROM tasks WHERE state = 'input-required'",
  outbox: 'SELECT count(*) AS n, min(created_at) AS oldest FROM push_outbox WHERE dead_at IS NULL',
} as const;

type Prepared = { [K in keyof typeof SQL]: Database.Statement };

/** The SQLite store's {@link StoreStats}: four indexed counts, and the size of the `-wal` file. */
export class SqliteStats {
  readonly #q: Prepared;
  readonly #walPath: string | undefined;

  constructor(db: Database.Database, path: string) {
    this.#q = Object.fromEntries(Object.entries(SQL).map(([k, sql]) => [k, db.prepare(sql)])) as Prepared;
    this.#walPath = path === ':memory:' ? undefined : `${path}-wal`;
  }

  async read(): Promise<StoreStats> {
    const count = (q: Database.Statement) => (q.get() as { n: number }).n;
    const outbox = this.#q.outbox.get() as { n: number; oldest: number | null };
    return {
      tasks: {
        submitted: count(this.#q.submitted),
        working: count(this.#q.working),
        'input-required': count(this.#q.inputRequired),
      },
      outbox: { depth: outbox.n, ...(outbox.oldest === null ? {} : { oldestAt: outbox.oldest }) },
      walBytes: await this.#walBytes(),
    };
  }

  async #walBytes(): Promise<number | undefined> {
    if (!this.#walPath) return undefined;
    // Between a checkpoint's truncation and the next write the file may be gone: it holds nothing.
    return stat(this.#walPath).then(
      (s) => s.size,
      () => 0,
    );
  }
}
