import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The package's entry and zod, as a skills module written outside the repository imports them. */
export const TASKHANDLE = pathToFileURL(fileURLToPath(new URL('../dist/src/index.js', import.meta.url))).href;
export const ZOD = pathToFileURL(
  fileURLToPath(new URL('../node_modules/zod/index.js', import.meta.url)),
).href;

/** A temporary folder for a test file's skills modules (SKILLS) and other files. */
export interface ModuleFolder {
  dir: string;
  /** Writes `source` as the file `name` of the folder; returns its path. */
  write(name: string, source: string): string;
}

export function moduleFolder(prefix: string): ModuleFolder {
  const dir = mkdtempSync(join(tmpdir(), `taskhandle-${prefix}-`));
  return {
    dir,
    write(name, source) {
      const file = join(dir, name);
      writeFileSync(file, source);
      return file;
    },
  };
}
