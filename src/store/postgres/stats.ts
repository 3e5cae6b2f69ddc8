import type { StoreStats } from '../../engine/store-port.js';
import type { Db } from './db.js';
import type { Statement } from './statements.js';

/**
 * One round trip. Each count names its state as the claim queries' partial indexes do, so it reads
 * the active tasks, never the stored ones; the outbox's due index holds the undelivered notifications.
 */
const STATS: Statement = {
  name: 'stats',
  text: `SELECT
    (SELECT count(*) FROM tasks WHERE state = 'submitted') AS submitted,
    (SELECT count(*) FROM tasks WHERE state = 'working') AS working,
    (SELECT count(*) FROM tasks WHERE state = 'input-required') AS input_required,
    (SELECT count(*) FROM push_outbox WHERE dead_at IS NULL) AS outbox,
    (SELECT min(created_at) FROM push_outbox WHERE dead_at IS NULL) AS oldest`,
};

interface StatsRow {
  submitted: number;
  working: number;
  input_required: number;
  outbox: number;
  oldest: number | null;
}

/** The PostgreSQL store's {@link StoreStats}: the cluster's counts, and this instance's pool. */
export async function readStats(db: Db): Promise<StoreStats> {
  const row = await db.one<StatsRow>(STATS, []);
  if (!row) throw new Error('the stats query returned no row');
  const { pool } = db;
  return {
    tasks: { submitted: row.submitted, working: row.working, 'input-required': row.input_required },
    outbox: { depth: row.outbox, ...(row.oldest === null ? {} : { oldestAt: row.oldest }) },
    pool: { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount },
  };
}
