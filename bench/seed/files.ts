import { copyFileSync, existsSync, rmSync, statSync } from 'node:fs';

/** A SQLite database is its file plus, in WAL mode, its -wal (and -shm) companions. */

export function copyDb(from: string, to: string): void {
  removeDb(to);
  copyFileSync(from, to);
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
}

export function removeDb(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}

/** Bytes on disk: the database file plus its write-ahead log. */
export function dbBytes(path: string): number {
  const size = (p: string) => (existsSync(p) ? statSync(p).size : 0);
  return size(path) + size(`${path}-wal`);
}
