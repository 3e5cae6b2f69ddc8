import type { Logger } from 'pino';
import type { Config } from '../config/settings.js';
import type { TaskStore } from '../engine/store-port.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';

/** The store DATABASE_URL names: the embedded SQLite file, or PostgreSQL shared by several instances. */
export async function openStore(config: Config, logger: Logger): Promise<TaskStore> {
  const d = config.database;
  if (d.kind === 'sqlite')
    return new SqliteStore({ path: d.path, synchronous: config.SQLITE_SYNCHRONOUS, logger, exclusive: true });
  return PostgresStore.open({ url: d.url, schema: d.schema, poolMax: d.poolMax, logger });
}
