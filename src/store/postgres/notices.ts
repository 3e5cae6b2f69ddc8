import type pg from 'pg';
import type { Logger } from 'pino';

/**
 * What `IF NOT EXISTS` says when the thing exists (duplicate_schema, duplicate_table: "... already
 * exists, skipping"): every start after the first migrates through these, so they tell nothing.
 */
const ROUTINE = new Set(['42P06', '42P07']);

/**
 * The server's notices and warnings on `client` (RAISE NOTICE / WARNING in a migration, a trigger
 * or a function; the server's own warnings), which pg drops unless listened for, logged once each
 * at warn; the routine ones at debug. Called once per connection, so that a notice is one line.
 */
export function logNotices(client: pg.ClientBase, logger: Logger): void {
  client.on('notice', (n) => {
    const fields = {
      severity: n.severity,
      code: n.code,
      message: n.message,
      ...(n.detail ? { detail: n.detail } : {}),
      ...(n.hint ? { hint: n.hint } : {}),
      ...(n.where ? { where: n.where } : {}),
    };
    if (n.severity === 'NOTICE' && n.code !== undefined && ROUTINE.has(n.code))
      logger.debug(fields, 'store: a notice from PostgreSQL');
    else logger.warn(fields, 'store: a notice from PostgreSQL');
  });
}
