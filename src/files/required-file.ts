import { accessSync, constants, statSync } from 'node:fs';
import { ConfigError } from '../config/error.js';

/**
 * A setting that names a file the server cannot run without: the file must be there and readable at
 * start, or the start stops naming the setting, the path and `remedy` (what to put there). Without
 * this, a wrong API_KEYS_FILE would start a server that answers 401 to everyone.
 */
export function requireReadableFile(setting: string, path: string, remedy: string): void {
  const refuse = (what: string) => new ConfigError(`${setting}=${path}: ${what}`);
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw refuse(`no such file. Fix the path (relative paths start at ${process.cwd()}), or ${remedy}`);
    throw refuse(`cannot reach it (${code}): let the user the server runs as reach its folder`);
  }
  if (!isFile) throw refuse(`not a file. Point ${setting} at a file: ${remedy}`);
  try {
    accessSync(path, constants.R_OK);
  } catch (err) {
    throw refuse(
      `cannot read it (${(err as NodeJS.ErrnoException).code}): let the user the server runs as read it`,
    );
  }
}
