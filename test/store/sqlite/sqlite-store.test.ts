import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewTask } from '../../../src/engine/store-port.js';
import { MIGRATIONS } from '../../../src/store/sqlite/migrations.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import { prepareStatements } from '../../../src/store/sqlite/statements.js';
import { tempDirs } from '../../helpers.js';
import { storeContract } from '../contract.js';

const dirs = tempDirs();

const freshPath = () => join(dirs.make(), 'tasks.db');

/** A task of alice's made at `now`, an hour-long handle's fields, overridden as given. */
const taskAt = (id: string, now: number, overrides: Partial<NewTask> = {}): NewTask => ({
  id,
  contextId: 'ctx',
  owner: 'alice',
  skill: 'echo',
  input: {},
  createdAt: now,
  expiresAt: now + 60_000,
  ttlMs: 60_000,
  pollIntervalMs: 1000,
  messageId: `m-${id}`,
  events: [],
  ...overrides,
});

storeContract('sqlite (temp file)', async () => new SqliteStore({ path: freshPath() }));
storeContract('sqlite (:memory:)', async () => new SqliteStore({ path: ':memory:' }));

describe('SqliteStore specifics', () => {
  const open: SqliteStore[] = [];
  const openStore = (path: string) => {
    const store = new SqliteStore({ path });
    open.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
  });

  /** Reads the file with a second connection, as an operator would. */
  function inspect<T>(path: string, read: (db: Database.Database) => T): T {
    const db = new Database(path, { readonly: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  }

  it('an exclusive store holds its file alone until closed, and a reader still reads it', async () => {
    const path = freshPath();
    const first = new SqliteStore({ path, exclusive: true });
    try {
      expect(() => new SqliteStore({ path, exclusive: true })).toThrow(
        expect.objectContaining({ code: 'database-in-use', path, pid: process.pid }),
      );
      expect(inspect(path, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
    } finally {
      await first.close();
    }
    const second = new SqliteStore({ path, exclusive: true });
    await second.close();
  });

  it('runs in WAL journal mode', () => {
    const path = freshPath();
    openStore(path);
    expect(inspect(path, (db) => db.pragma('journal_mode', { simple: true }))).toBe('wal');
  });

  it('creates the parent directory of the database file', async () => {
    const path = join(dirs.make(), 'nested', 'deeper', 'tasks.db');
    await openStore(path).ping();
  });

  it('records each migration once; reopening an existing file does not apply them again', async () => {
    const path = freshPath();
    await openStore(path).close();
    const migrations = () =>
      inspect(path, (db) => db.prepare('SELECT version, name, applied_at FROM schema_migrations').all());
    const first = migrations() as { version: number }[];
    expect(first.map((m) => m.version)).toEqual(MIGRATIONS.map((m) => m.version));
    // A second open would fail on CREATE TABLE (or ADD COLUMN) if it re-ran a migration.
    await openStore(path).close();
    expect(migrations()).toEqual(first);
  });

  it('upgrades a database made by an older version, keeping its tasks', async () => {
    const path = freshPath();
    const [v1] = MIGRATIONS;
    const db = new Database(path);
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at INTEGER)');
    db.exec(v1?.sql ?? '');
    db.prepare('INSERT INTO schema_migrations VALUES (1, ?, 0)').run(v1?.name);
    db.prepare(
      `INSERT INTO tasks (id, context_id, owner, skill, state, created_at, updated_at, expires_at, ttl_ms,
           poll_interval_ms) VALUES ('old', 'ctx', 'alice', 'echo', 'working', 1, 1, 9e15, 1, 1)`,
    ).run();
    db.close();
    const store = openStore(path);
    expect(await store.getTask('old', 2)).toMatchObject({ id: 'old', state: 'working', interruptions: 0 });
    await store.close();
  });

  it('refuses a database migrated by a newer taskhandle, naming both versions', async () => {
    const path = freshPath();
    await openStore(path).close();
    const db = new Database(path);
    db.prepare("INSERT INTO schema_migrations VALUES (999, 'from the future', 0)").run();
    db.close();
    const newest = Math.max(...MIGRATIONS.map((m) => m.version));
    expect(() => new SqliteStore({ path })).toThrow(
      `database ${path} is at migration 999, newer than this taskhandle knows (${newest}): run a newer version`,
    );
  });

  it('keeps tasks, events and message ids across close and reopen', async () => {
    const path = freshPath();
    const store = openStore(path);
    const now = Date.now();
    const { result } = await store.createTask({
      id: 'task-1',
      contextId: 'ctx',
      owner: 'alice',
      skill: 'echo',
      input: { n: 1 },
      createdAt: now,
      expiresAt: now + 60_000,
      ttlMs: 60_000,
      pollIntervalMs: 1000,
      messageId: 'm-1',
      events: [{ kind: 'status', state: 'submitted' }],
    });
    const [claim] = await store.claim('w1', now, 60_000, 1);
    await store.write({
      taskId: 'task-1',
      from: ['working'],
      to: 'completed',
      leaseToken: claim?.leaseToken,
      releaseLease: true,
      events: [{ kind: 'status', state: 'completed' }],
      at: now + 1,
    });
    const before = await store.getTaskWithLog('task-1', now + 2);
    expect(before?.record.state).toBe('completed');
    await store.close();

    const reopened = openStore(path);
    expect(await reopened.getTaskWithLog('task-1', now + 2)).toEqual(before);
    expect((await reopened.findByMessageId('alice', 'm-1'))?.id).toBe(result.record.id);
    expect((await reopened.readEvents('task-1', 0, 10)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('copies committed writes into the database file off the event loop, soon after they commit', async () => {
    const path = freshPath();
    const store = openStore(path);
    const now = Date.now();
    for (let i = 0; i < 20; i++) {
      await store.createTask(
        taskAt(`cp-${i}`, now, { input: { i }, events: [{ kind: 'status', state: 'submitted' }] }),
      );
    }
    // Far below SQLite's own threshold (1,000 pages): only the checkpoint worker copies them. The
    // database file alone (its WAL left behind) then holds every task.
    const copy = join(dirs.make(), 'copy.db');
    let count = 0;
    for (let tries = 0; tries < 50 && count < 20; tries++) {
      await new Promise((r) => setTimeout(r, 100));
      copyFileSync(path, copy);
      // Until the worker's first checkpoint the file alone has no tables yet (its schema is in the WAL too).
      try {
        count = inspect(
          copy,
          (db) => (db.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number }).n,
        );
      } catch {
        count = 0;
      }
    }
    expect(count).toBe(20);
  });

  // A poll of a queued task counts up to 250 tasks ahead: from index entries, never one row each.
  it("counts the tasks ahead of a queued one from its owner's queue index alone", async () => {
    const path = freshPath();
    await openStore(path).close();
    const plan = inspect(path, (db) => {
      const sql = prepareStatements(db).queueCounts.source;
      const args = { owner: 'o', queue_at: 0, id: 't', now: 0, cap: 250, tenant: 'o', skill: 's' };
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(args) as { detail: string }[]).map((r) => r.detail);
    });
    expect(plan.join('\n')).toMatch(
      /SEARCH tasks USING COVERING INDEX tasks_queue_by_owner \(owner=\? AND \(queue_at,id\)<\(\?,\?\)\)/,
    );
  });

  // Without statistics (a new database, or one analyzed before any task queued) SQLite's planner took
  // tasks_by_state and sorted every queued or working task for each claim: a claim grew with the queue.
  it("plans the claim's reads and the input sweep on their partial indexes, whatever the statistics", async () => {
    const path = freshPath();
    await openStore(path).close();
    const claimReads = {
      claimableOrphans: 'tasks_leased',
      claimableOrphansAnySkill: 'tasks_leased',
      queuedOwnerAfter: 'tasks_queue_by_owner',
      ownerQueue: 'tasks_queue_by_owner',
      ownerQueueAnySkill: 'tasks_queue_by_owner',
      running: 'tasks_running',
      overdueInputs: 'tasks_input_deadline',
    } as const;
    const plans = () =>
      inspect(path, (db) => {
        const q = prepareStatements(db);
        return Object.fromEntries(
          Object.keys(claimReads).map((name) => {
            const sql = q[name as keyof typeof claimReads].source;
            const args = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1], null]));
            const positional = (sql.match(/\?/g) ?? []).map(() => null);
            const rows = db
              .prepare(`EXPLAIN QUERY PLAN ${sql}`)
              .all(...(Object.keys(args).length ? [args] : positional)) as { detail: string }[];
            return [name, rows.map((r) => r.detail).join('\n')];
          }),
        );
      });
    const expectIndexed = (found: Record<string, string>) => {
      for (const [name, index] of Object.entries(claimReads)) {
        expect(found[name], name).toMatch(
          new RegExp(`(SEARCH|SCAN) tasks USING (COVERING )?INDEX ${index}\\b`),
        );
        expect(found[name], name).not.toMatch(/TEMP B-TREE/);
      }
    };
    expectIndexed(plans());
    // Statistics taken with no task queued or working: the partial indexes look empty.
    const store = openStore(path);
    const now = Date.now();
    for (let i = 0; i < 50; i++) {
      await store.createTask(taskAt(`t-${i}`, now));
      const [claimed] = await store.claim('w', now, 60_000, 1);
      await store.write({
        taskId: `t-${i}`,
        from: ['working'],
        to: 'completed',
        leaseToken: claimed?.leaseToken,
        releaseLease: true,
        events: [],
        at: now,
      });
    }
    await store.close();
    const writer = new Database(path);
    writer.exec('ANALYZE');
    writer.close();
    expectIndexed(plans());
  });

  it('refuses a state outside the declared states (the CHECK mirrors TASK_STATES)', async () => {
    const path = freshPath();
    const store = openStore(path);
    const now = Date.now();
    await store.createTask(taskAt('task-1', now, { messageId: 'm-1' }));
    await expect(
      store.write({
        taskId: 'task-1',
        from: ['submitted'],
        // @ts-expect-error: not a TaskState; the schema must refuse it even if the types are bypassed
        to: 'exploded',
        events: [],
        at: now,
      }),
    ).rejects.toThrow(/CHECK/);
  });
});
