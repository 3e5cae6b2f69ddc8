import { dirname } from 'node:path';
import {
  ensurePrivateDir,
  ensurePrivateFile,
  type ModeLog,
  PRIVATE_FILE_MODE,
  tightenIfPresent,
} from '../../files/private-modes.js';

/**
 * Makes the database private before SQLite opens it: it holds every tenant's tasks and the webhooks'
 * credentials. The directory is created 0700 and the file 0600 (an existing one is tightened). SQLite
 * then creates its `-wal`, `-shm` and `-journal` files with the database file's own mode whatever the
 * umask (its unix VFS sets it with fchmod), so they are 0600 too; existing ones are tightened here.
 */
export function makeDatabasePrivate(path: string, log: ModeLog): void {
  ensurePrivateDir(dirname(path), log);
  ensurePrivateFile(path, log);
  for (const suffix of ['-wal', '-shm', '-journal'])
    tightenIfPresent(`${path}${suffix}`, PRIVATE_FILE_MODE, log);
}
