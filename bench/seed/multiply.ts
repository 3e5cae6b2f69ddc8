import Database from 'better-sqlite3';

/**
 * Grows a store to `target` tasks by copying the tasks it already holds (the templates, made through
 * HTTP by a real run of the server) under new ids, in SQL: seeding a million tasks through HTTP
 * would take far longer than the benchmark. Works on both schemas: the `tasks` table keyed by `id`,
 * plus every table with a `task_id` column (taskhandle's events and message_ids). Copies get new
 * task, context and message ids; ids inside JSON payloads are rewritten to match.
 */
export function multiplyTasks(dbPath: string, target: number): { tasks: number } {
  const db = new Database(dbPath);
  try {
    const templates = (db.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number }).n;
    if (templates === 0) throw new Error(`${dbPath} holds no task to copy`);
    const copies = Math.max(1, Math.round(target / templates)) - 1; // the templates stay
    // Seeding needs no crash safety; a rollback journal keeps the WAL from growing to the data size.
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -262144');
    db.transaction(() => {
      db.exec(`CREATE TEMP TABLE copy_map AS
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${copies})
        SELECT n.i AS i, t.id AS old_id, t.context_id AS old_ctx,
          printf('%08x-%04x-4000-8000-%012x', n.i, t.rowid % 65536, t.rowid) AS new_id,
          printf('%08x-%04x-4000-c000-%012x', n.i, t.rowid % 65536, t.rowid) AS new_ctx
        FROM n CROSS JOIN tasks t WHERE ${copies} > 0 ORDER BY new_id`);
      for (const table of tablesToCopy(db)) {
        const key = table === 'tasks' ? 'id' : 'task_id';
        const columns = db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string; type: string }[];
        const names = columns.map((c) => `"${c.name}"`).join(', ');
        const values = columns.map((c) => copyExpression(c.name, c.type, key)).join(', ');
        db.exec(`INSERT INTO "${table}" (${names})
          SELECT ${values} FROM copy_map m JOIN "${table}" c ON c."${key}" = m.old_id ORDER BY m.new_id`);
      }
      db.exec('DROP TABLE copy_map');
    })();
    db.pragma('journal_mode = WAL');
    return { tasks: (db.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number }).n };
  } finally {
    db.close();
  }
}

/** `tasks` first, then every table that refers to a task by `task_id`. */
function tablesToCopy(db: Database.Database): string[] {
  const tables = (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as {
      name: string;
    }[]
  ).map((t) => t.name);
  const children = tables.filter(
    (t) =>
      t !== 'tasks' &&
      (db.prepare(`PRAGMA table_info("${t}")`).all() as { name: string }[]).some((c) => c.name === 'task_id'),
  );
  return ['tasks', ...children];
}

function copyExpression(name: string, type: string, key: string): string {
  if (name === key) return 'm.new_id';
  if (name === 'context_id') return 'm.new_ctx';
  if (name === 'message_id') return `c."${name}" || '-' || m.i`;
  if (/TEXT|CHAR|CLOB/i.test(type) || type === '')
    return `replace(replace(c."${name}", m.old_id, m.new_id), m.old_ctx, m.new_ctx)`;
  return `c."${name}"`;
}

/** `count` task ids spread over the whole store (random rows, not just the newest). */
export function sampleTaskIds(dbPath: string, count: number): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare('SELECT id FROM tasks ORDER BY random() LIMIT ?').all(count) as { id: string }[]).map(
      (r) => r.id,
    );
  } finally {
    db.close();
  }
}
