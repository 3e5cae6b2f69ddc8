import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WalSync } from '../../../src/store/sqlite/wal-sync.js';

/** An fsync that completes only when the test says so. */
function manualFsync() {
  const calls: ((err: NodeJS.ErrnoException | null) => void)[] = [];
  return {
    calls,
    fsync: (_fd: number, done: (err: NodeJS.ErrnoException | null) => void) => calls.push(done),
  };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('WalSync', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function open(fsync: ReturnType<typeof manualFsync>['fsync']): WalSync {
    dir = mkdtempSync(join(tmpdir(), 'wal-sync-'));
    const db = join(dir, 'db.sqlite');
    writeFileSync(`${db}-wal`, '');
    return new WalSync(db, fsync);
  }

  it('answers a commit only after an fsync that started after it', async () => {
    const f = manualFsync();
    const wal = open(f.fsync);
    let first = false;
    let second = false;
    void wal.sync().then(() => (first = true));
    expect(f.calls).toHaveLength(1);
    // Committed while the first fsync runs: that fsync may have missed it.
    void wal.sync().then(() => (second = true));
    expect(f.calls).toHaveLength(1);
    f.calls[0]?.(null);
    await flush();
    expect(first).toBe(true);
    expect(second).toBe(false);
    expect(f.calls).toHaveLength(2);
    f.calls[1]?.(null);
    await flush();
    expect(second).toBe(true);
    wal.close();
  });

  it('lets commits made during one fsync share the next', async () => {
    const f = manualFsync();
    const wal = open(f.fsync);
    const first = wal.sync();
    const waiting = [wal.sync(), wal.sync(), wal.sync()];
    f.calls[0]?.(null);
    await first;
    expect(f.calls).toHaveLength(2);
    f.calls[1]?.(null);
    await Promise.all(waiting);
    expect(f.calls).toHaveLength(2);
    wal.close();
  });

  it('fails the commits an fsync error leaves undurable, and recovers for the next ones', async () => {
    const f = manualFsync();
    const wal = open(f.fsync);
    const failed = wal.sync();
    f.calls[0]?.(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
    await expect(failed).rejects.toThrow('EIO');
    const next = wal.sync();
    f.calls[1]?.(null);
    await expect(next).resolves.toBeUndefined();
    wal.close();
  });
});
