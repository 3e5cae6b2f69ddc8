import { closeSync, fsync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

type Fsync = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

interface Batch {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Makes committed transactions durable off the event loop. The connection runs with
 * `synchronous=NORMAL`, so COMMIT only writes the WAL (better-sqlite3 is synchronous: with FULL the
 * whole process would stand still during every fsync). Writers are answered after `sync()`, which
 * fsyncs the WAL file on libuv's thread pool: what a caller was told is stored survives power loss,
 * exactly as with FULL, while the event loop keeps serving. Checkpoints stay safe: in NORMAL mode
 * SQLite syncs the WAL before it copies pages into the database and syncs that after.
 *
 * Syncs coalesce: calls made while one fsync runs share the next one, which starts after it (an
 * fsync that began before a commit may have missed it).
 */
export class WalSync {
  readonly #walPath: string;
  readonly #fsync: Fsync;
  #fd: number | undefined;
  #running = false;
  #next: Batch | undefined;

  constructor(dbPath: string, fsyncImpl: Fsync = fsync) {
    this.#walPath = `${dbPath}-wal`;
    this.#fsync = fsyncImpl;
  }

  /** Resolves once everything committed before this call is on disk. */
  sync(): Promise<void> {
    if (!this.#next) {
      let resolve!: () => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.#next = { promise, resolve, reject };
    }
    const { promise } = this.#next;
    if (!this.#running) this.#start();
    return promise;
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  #start(): void {
    const batch = this.#next;
    if (!batch) return;
    this.#next = undefined;
    this.#running = true;
    let fd: number;
    try {
      fd = this.#open();
    } catch (err) {
      this.#finish(batch, err);
      return;
    }
    this.#fsync(fd, (err) => this.#finish(batch, err));
  }

  #finish(batch: Batch, err: unknown): void {
    if (err) batch.reject(err);
    else batch.resolve();
    this.#running = false;
    if (this.#next) this.#start();
  }

  /** The WAL exists once the first transaction committed; its directory entry is synced once too. */
  #open(): number {
    if (this.#fd !== undefined) return this.#fd;
    const fd = openSync(this.#walPath, 'r+');
    const dir = openSync(dirname(this.#walPath), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.#fd = fd;
    return fd;
  }
}
