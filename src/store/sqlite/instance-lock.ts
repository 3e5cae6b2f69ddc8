import { existsSync, readFileSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import {
  ensurePrivateFile,
  type ModeLog,
  PRIVATE_FILE_MODE,
  tightenIfPresent,
} from '../../files/private-modes.js';

/**
 * Another server holds the database: SQLite serves one process at a time (a second one's streams
 * would never see the first one's work). `pid` is the holder's, when the OS tells it.
 */
export class DatabaseInUse extends Error {
  readonly code = 'database-in-use';
  constructor(
    readonly path: string,
    readonly pid: number | undefined,
  ) {
    super(`${path} is in use by another taskhandle server${pid === undefined ? '' : ` (pid ${pid})`}`);
  }
}

/**
 * One server per SQLite file, held with an OS lock that dies with the process (so a `kill -9` never
 * blocks the restart). The lock is SQLite's own (a POSIX record lock) on a small sidecar database,
 * `<path>.lock`, kept in exclusive locking mode after one write: the task database itself stays
 * open to readers (tests, `sqlite3` for a look) and keeps its WAL shared memory.
 */
export class InstanceLock {
  readonly #db: Database.Database;

  private constructor(db: Database.Database) {
    this.#db = db;
  }

  /** Takes the lock for `dbPath`, or throws {@link DatabaseInUse} at once (it never waits). */
  static take(dbPath: string, log: ModeLog): InstanceLock {
    const path = `${dbPath}.lock`;
    // An existing file is only chmod-ed, never opened: closing any descriptor of a file drops every
    // POSIX lock this process holds on it, so opening it here would release a lock already held.
    if (existsSync(path)) tightenIfPresent(path, PRIVATE_FILE_MODE, log);
    else ensurePrivateFile(path, log);
    const db = new Database(path, { timeout: 0 });
    try {
      db.pragma('locking_mode = EXCLUSIVE');
      // No journal file beside it: the one row it holds is only ever rewritten whole.
      db.pragma('journal_mode = MEMORY');
      db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since TEXT NOT NULL)');
      // The write takes the exclusive lock, and exclusive locking mode keeps it until close.
      db.transaction(() => {
        db.exec('DELETE FROM holder');
        db.prepare('INSERT INTO holder VALUES (?, ?)').run(process.pid, new Date().toISOString());
      })();
      return new InstanceLock(db);
    } catch (err) {
      db.close();
      if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new DatabaseInUse(dbPath, holderPid(path));
      throw err;
    }
  }

  release(): void {
    if (this.#db.open) this.#db.close();
  }
}

/**
 * The pid holding a lock on `path`, as Linux lists it in /proc/locks (`... POSIX ADVISORY WRITE <pid>
 * <major>:<minor>:<inode> ...`); undefined elsewhere or when it cannot be told.
 */
function holderPid(path: string): number | undefined {
  try {
    const inode = statSync(path).ino;
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      const m = /\bPOSIX\s+\S+\s+WRITE\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
      // 0: the holder is in another pid namespace (another container sharing the volume).
      if (m?.[2] === String(inode) && Number(m[1]) > 0) return Number(m[1]);
    }
  } catch {
    // Not Linux, or /proc is not mounted: the message goes without the pid.
  }
  return undefined;
}
