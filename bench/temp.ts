import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let root: string | undefined;

/** A path inside this run's temporary folder (removed when the run ends). */
export function tempPath(name: string): string {
  if (!root) {
    root = mkdtempSync(join(tmpdir(), 'taskhandle-bench-'));
    const dir = root;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return join(root, name);
}

let counter = 0;
/** A fresh, not yet existing file path for a database. */
export const freshDbPath = (label: string): string => tempPath(`${label}-${++counter}.db`);
