import pg from 'pg';
import type { Logger } from 'pino';
import { logNotices } from './notices.js';
import type { Statement } from './statements.js';

const PG_INT8 = 20;
const PG_BYTEA = 17;
const asIs = (value: unknown) => value;
/**
 * Times are Unix milliseconds in bigint columns: well inside Number's exact range. A bytea read in
 * binary format (blob pieces) is already its bytes: kept as the Buffer it arrives in.
 */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === PG_INT8 && format !== 'binary') return Number;
    if (oid === PG_BYTEA && format === 'binary') return asIs;
    return pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser,
};

/** An unreachable server fails the start (or a request) after this long instead of hanging it. */
const CONNECT_TIMEOUT_MS = 10_000;

/** The pool (each query on any connection) or one connection (inside a transaction). */
export type Queryable = Pick<pg.ClientBase, 'query'>;

/** The connection settings of every connection to the cluster's schema (the pool's and the feed's). */
export function connectionConfig(url: string, schema: string): pg.ClientConfig {
  return {
    connectionString: url,
    // Unquoted: the schema name is [a-z0-9_] (config), so it needs no escaping here.
    options: `-c search_path=${schema}`,
    types,
    application_name: 'taskhandle',
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  };
}

/** A pool of connections, its named statements and its transactions. */
export class Db {
  readonly pool: pg.Pool;

  constructor(config: pg.ClientConfig, max: number, logger?: Logger) {
    this.pool = new pg.Pool({ ...config, max });
    // An idle connection that breaks (server restart) is dropped by the pool; the next query opens a new one.
    this.pool.on('error', (err) => logger?.warn({ err }, 'store: an idle connection failed'));
    // Once per connection, as it opens: a listener added at each checkout would log a notice as
    // many times as its connection had been handed out.
    if (logger) this.pool.on('connect', (client) => logNotices(client, logger));
  }

  /** Runs a named statement on any connection (a single statement is a transaction of its own). */
  async query<R extends pg.QueryResultRow>(statement: Statement, values: unknown[]): Promise<R[]> {
    return (await this.pool.query<R>({ ...statement, values })).rows;
  }

  async one<R extends pg.QueryResultRow>(statement: Statement, values: unknown[]): Promise<R | undefined> {
    return (await this.query<R>(statement, values))[0];
  }

  /**
   * Runs `work` in a transaction on one connection; what it throws rolls the transaction back.
   * `opening`: what opens it, BEGIN and what must come first (a lock), in one round trip.
   */
  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>, opening = 'BEGIN'): Promise<T> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query(opening);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      // A connection that could not even roll back is closed, not handed to the next caller.
      client.release(broken);
    }
  }

  /** A single statement needs no transaction of its own; several do. */
  maybeTransaction<T>(transaction: boolean, work: (client: Queryable) => Promise<T>): Promise<T> {
    return transaction ? this.transaction(work) : work(this.pool);
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}
