import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { tempDirs } from '../../helpers.js';

const dirs = tempDirs();

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** A real logger whose records the test reads. */
function recordingLogger() {
  const records: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) records.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino(sink), records };
}

describe('SQLite file modes', () => {
  const open: SqliteStore[] = [];
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
  });

  it('a fresh database, its -wal and -shm, and its directory are private (0600, 0700) whatever the umask', () => {
    const dir = join(dirs.make(), 'data', 'nested');
    const path = join(dir, 'tasks.db');
    const umask = process.umask(0); // the loosest: without our modes, files would be 0666 and dirs 0777
    try {
      open.push(new SqliteStore({ path }));
    } finally {
      process.umask(umask);
    }
    // Opening migrates the schema in WAL mode: the -wal and -shm files exist while the store is open.
    expect(existsSync(`${path}-wal`)).toBe(true);
    expect(existsSync(`${path}-shm`)).toBe(true);
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    expect(modeOf(`${path}-shm`)).toBe(0o600);
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, '..'))).toBe(0o700);
  });

  it('a database left readable by others (0644) is tightened to 0600 at open, with a warning saying so', async () => {
    const path = join(dirs.make(), 'tasks.db');
    await new SqliteStore({ path }).close();
    chmodSync(path, 0o644);
    writeFileSync(`${path}-wal`, '', { mode: 0o644 });
    chmodSync(`${path}-wal`, 0o644);
    const { logger, records } = recordingLogger();
    open.push(new SqliteStore({ path, logger }));
    expect(modeOf(path)).toBe(0o600);
    expect(modeOf(`${path}-wal`)).toBe(0o600);
    expect(records).toEqual([
      expect.objectContaining({ level: 40, path, mode: '0644', now: '0600' }),
      expect.objectContaining({ level: 40, path: `${path}-wal`, mode: '0644', now: '0600' }),
    ]);
    expect(String(records[0]?.msg)).toBe(`${path} was open to other users (0644): tightened to 0600`);
  });

  it('an existing directory open to others is reported, not changed (it may be shared)', () => {
    const dir = join(dirs.make(), 'shared');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const { logger, records } = recordingLogger();
    open.push(new SqliteStore({ path: join(dir, 'tasks.db'), logger }));
    expect(modeOf(dir)).toBe(0o755);
    expect(modeOf(join(dir, 'tasks.db'))).toBe(0o600);
    expect(records).toEqual([expect.objectContaining({ level: 40, path: dir, mode: '0755' })]);
    expect(String(records[0]?.msg)).toContain('restrict it (chmod 700)');
  });
});
