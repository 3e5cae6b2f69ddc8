import { chmodSync, closeSync, fchmodSync, fstatSync, mkdirSync, openSync, statSync } from 'node:fs';
import type { Logger } from 'pino';

/** Only the server's own user may list or enter a private directory, or read or write a private file. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Where a path found open to other users is reported (undefined: nowhere). */
export type ModeLog = Pick<Logger, 'warn'> | undefined;

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * Creates `dir` (and missing parents) 0700. One that exists already is left as it is, and reported when
 * others may enter it: it may be shared (the working directory, /tmp), so only its owner should change it.
 */
export function ensurePrivateDir(dir: string, log: ModeLog): void {
  if (mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE }) !== undefined) return;
  const mode = statSync(dir).mode;
  if (mode & 0o077)
    log?.warn(
      { path: dir, mode: octal(mode) },
      `${dir} is open to other users (${octal(mode)}): restrict it (chmod 700) if only taskhandle uses it`,
    );
}

/**
 * Creates `file` empty with mode 0600 if it is missing (the mode is given to open(2): there is no moment
 * at which it exists with a looser one, whatever the umask), or tightens an existing one to 0600.
 */
export function ensurePrivateFile(file: string, log: ModeLog): void {
  const fd = openSync(file, 'a', PRIVATE_FILE_MODE);
  try {
    const mode = fstatSync(fd).mode & 0o777;
    if (mode & 0o077) {
      fchmodSync(fd, PRIVATE_FILE_MODE);
      tightened(log, file, mode, PRIVATE_FILE_MODE);
    }
  } finally {
    closeSync(fd);
  }
}

/** Tightens `path` to `mode` if it exists and others have any access to it; a missing path is fine. */
export function tightenIfPresent(path: string, mode: number, log: ModeLog): void {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if ((current & 0o077) === 0) return;
  chmodSync(path, mode);
  tightened(log, path, current, mode);
}

function tightened(log: ModeLog, path: string, from: number, to: number): void {
  log?.warn(
    { path, mode: octal(from), now: octal(to) },
    `${path} was open to other users (${octal(from)}): tightened to ${octal(to)}`,
  );
}
