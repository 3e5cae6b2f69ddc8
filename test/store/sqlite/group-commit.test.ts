import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../../src/store/sqlite/group-commit.js';

function setup() {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (v TEXT PRIMARY KEY)');
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
  const rows = () => (db.prepare('SELECT v FROM t ORDER BY v').all() as { v: string }[]).map((r) => r.v);
  let commits = 0;
  const writes = new GroupCommit(db, { committed: () => commits++ });
  return { db, insert, rows, writes, commits: () => commits };
}

describe('GroupCommit', () => {
  it('commits the writes of one turn together, in one transaction', async () => {
    const { insert, rows, writes, commits } = setup();
    const answers = await Promise.all(['a', 'b', 'c'].map((v) => writes.run(() => insert.run(v).changes)));
    expect(answers).toEqual([1, 1, 1]);
    expect(rows()).toEqual(['a', 'b', 'c']);
    expect(commits()).toBe(1);
  });

  it('a write that fails rolls back alone, with everything it did; the others of its group commit', async () => {
    const { insert, rows, writes } = setup();
    const results = await Promise.allSettled([
      writes.run(() => insert.run('a')),
      writes.run(() => {
        insert.run('b');
        throw new Error('refused after writing');
      }),
      writes.run(() => insert.run('c')),
      // A constraint the database itself refuses.
      writes.run(() => insert.run('a')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('refused after writing');
    expect(String((results[3] as PromiseRejectedResult).reason)).toContain('UNIQUE');
    expect(rows()).toEqual(['a', 'c']);
  });

  it('answers every write of the group with the failure when the database cannot take it', async () => {
    const { db, insert, writes } = setup();
    const [first, second] = [writes.run(() => insert.run('a')), writes.run(() => insert.run('b'))];
    db.close();
    await expect(first).rejects.toThrow();
    await expect(second).rejects.toThrow();
  });
});
