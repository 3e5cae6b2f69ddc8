import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Polls `probe` until it returns something other than `undefined`, or fails after `timeoutMs` with
 * `describe()` in the message. Tests wait for states with this, never with fixed sleeps.
 */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  describe: () => string | Promise<string>,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${await describe()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A promise with its resolve function, for skills that wait until the test lets them go. */
export function latch<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Temp directories for databases and keys, all removed after the last test of the file (or block). */
export function tempDirs(): { make: () => string } {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return {
    make() {
      const dir = mkdtempSync(join(tmpdir(), 'taskhandle-test-'));
      dirs.push(dir);
      return dir;
    },
  };
}
