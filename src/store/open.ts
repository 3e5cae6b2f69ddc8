import type { Logger } from 'pino';
import type { DatabaseConfig } from '../config/settings.js';
import type { TaskStore } from '../engine/store-port.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

/**
 * The store DATABASE_URL names: the embedded SQLite file (written with SQLITE_SYNCHRONOUS), or
 * PostgreSQL shared by several instances.
 */
export async function openStore(
  d: DatabaseConfig,
  sqlite: { synchronous: 'full' | 'normal' },
  logger: Logger,
): Promise<TaskStore> {
  if (d.kind === 'sqlite')
    return new SqliteStore({ path: d.path, synchronous: sqlite.synchronous, logger, exclusive: true });
  return PostgresStore.open({ url: d.url, schema: d.schema, poolMax: d.poolMax, logger });
}
