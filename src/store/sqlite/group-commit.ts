import type Database from 'better-sqlite3';

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes queued during one turn of the event loop run in a single transaction, so
 * concurrent requests share one WAL sync instead of paying one each. Every write still runs in its
 * own savepoint (better-sqlite3 nests `db.transaction` as savepoints), so one that fails rolls back
 * alone; every caller is answered only after the commit that made its write durable (`durable`,
 * when given, resolves once what was committed is on disk).
 */
export class GroupCommit {
  readonly #db: Database.Database;
  readonly #durable: (() => Promise<void>) | undefined;
  readonly #committed: (() => void) | undefined;
  #queue: Pending[] = [];
  #scheduled = false;

  /**
   * `durable` resolves once what was committed is on disk (answers wait for it); `committed` is told
   * after each commit (the checkpointer's cue).
   */
  constructor(db: Database.Database, hooks: { durable?: () => Promise<void>; committed?: () => void } = {}) {
    this.#db = db;
    this.#durable = hooks.durable;
    this.#committed = hooks.committed;
  }

  /** Runs `work` (a synchronous write) in the next group; resolves with its result once committed. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /** Commits what is queued now (before the database closes). */
  flushNow(): void {
    if (this.#queue.length > 0) this.#flush();
  }

  #flush(): void {
    this.#scheduled = false;
    const group = this.#queue;
    this.#queue = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.#db.transaction(() => {
        for (const { work } of group) {
          try {
            outcomes.push({ ok: true, value: this.#db.transaction(work)() });
          } catch (error) {
            outcomes.push({ ok: false, value: error });
          }
        }
      })();
    } catch (error) {
      // The commit itself failed (disk full, I/O error): nothing of the group is durable.
      for (const p of group) p.reject(error);
      return;
    }
    this.#committed?.();
    const answer = () =>
      group.forEach((p, i) => {
        const outcome = outcomes[i];
        if (outcome?.ok) p.resolve(outcome.value);
        else p.reject(outcome?.value);
      });
    if (!this.#durable) {
      answer();
      return;
    }
    this.#durable().then(answer, (error: unknown) => {
      for (const p of group) p.reject(error);
    });
  }
}
