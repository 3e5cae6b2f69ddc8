/**
 * The servers under test: (a) the floors (node:http alone, and with the least SQLite work a durable
 * create and a poll can do), (b) the SDK reference on two stores, (c) this server on
 * SQLite (over JSON-RPC, over gRPC, and with its Prometheus metrics on), and on PostgreSQL with one
 * instance and with two sharing one schema.
 */
export const SERVER_KINDS = [
  'floor',
  'sqlite-floor',
  'sdk-memory',
  'sdk-sqlite',
  'taskhandle',
  'taskhandle-grpc',
  'taskhandle-metrics',
  'taskhandle-pg',
  'taskhandle-pg-2',
] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

/** The kinds that need a PostgreSQL server (skipped, with one log line, where none answers). */
export const POSTGRES_KINDS = ['taskhandle-pg', 'taskhandle-pg-2'] as const satisfies readonly ServerKind[];
export type PostgresKind = (typeof POSTGRES_KINDS)[number];
export const isPostgres = (k: ServerKind): k is PostgresKind =>
  (POSTGRES_KINDS as readonly string[]).includes(k);

export const SERVER_LABELS: Record<ServerKind, string> = {
  floor: '(a) node:http floor',
  'sqlite-floor': '(a) node:http + SQLite floor',
  'sdk-memory': '(b) SDK 1.3, InMemoryTaskStore',
  'sdk-sqlite': '(b) SDK 1.3, DatabaseTaskStore (SQLite)',
  taskhandle: '(c) taskhandle, SQLite',
  'taskhandle-grpc': '(c) taskhandle, SQLite, over gRPC',
  'taskhandle-metrics': '(c) taskhandle, SQLite, metrics on',
  'taskhandle-pg': '(c) taskhandle, PostgreSQL, 1 instance',
  'taskhandle-pg-2': '(c) taskhandle, PostgreSQL, 2 instances',
};
