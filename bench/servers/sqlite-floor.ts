import { fsync, openSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';

/**
 * The floor of a durable task server on this machine: node:http plus the least a durable create
 * and a poll can do with SQLite. SendMessage stores the request as one row (its messageId the
 * primary key) and is answered once that row is on disk: the writes of one event-loop turn commit
 * in one transaction (WAL, synchronous=NORMAL), then the WAL is fsynced on libuv's thread pool, the
 * durability taskhandle promises with SQLITE_SYNCHRONOUS=full. GetTask reads one row by primary key
 * and answers it. No validation, no task, no index but the key: what is left of the budget above
 * this is all a task server has for everything else it does.
 */
const db = new Database(process.env.DB_PATH ?? ':memory:');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('temp_store = MEMORY');
db.exec('CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, body TEXT NOT NULL, at INTEGER NOT NULL)');
const insert = db.prepare('INSERT OR IGNORE INTO tasks (id, body, at) VALUES (?, ?, ?)');
const read = db.prepare('SELECT id, at FROM tasks WHERE id = ?');

interface Pending {
  id: string;
  body: string;
  answer: () => void;
}
let pending: Pending[] = [];
let walFd: number | undefined;

function commit(): void {
  const batch = pending;
  pending = [];
  const at = Date.now();
  db.transaction(() => {
    for (const p of batch) insert.run(p.id, p.body, at);
  })();
  walFd ??= openSync(`${db.name}-wal`, 'r+');
  fsync(walFd, () => {
    for (const p of batch) p.answer();
  });
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let call: {
      id?: unknown;
      method?: unknown;
      params?: { id?: unknown; message?: { messageId?: unknown } };
    } = {};
    try {
      call = JSON.parse(body);
    } catch {
      // answer anyway, as the floor does
    }
    const id = call.id ?? null;
    if (call.method === 'SendMessage') {
      const taskId = String(call.params?.message?.messageId ?? '');
      pending.push({ id: taskId, body, answer: () => answer(res, id, { task: { id: taskId } }) });
      if (pending.length === 1) setImmediate(commit);
      return;
    }
    const row = read.get(String(call.params?.id ?? '')) as { id: string; at: number } | undefined;
    answer(
      res,
      id,
      row ? { id: row.id, status: { state: 'TASK_STATE_SUBMITTED', timestamp: row.at } } : { ok: true },
    );
  });
});

function answer(res: ServerResponse, id: unknown, result: unknown): void {
  const text = JSON.stringify({ jsonrpc: '2.0', id, result });
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ msg: 'sqlite floor listening', url: `http://127.0.0.1:${port}` }));
});
process.once('SIGTERM', () => {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  server.closeAllConnections();
});
