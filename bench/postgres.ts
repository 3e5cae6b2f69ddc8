import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { cpuSeconds } from './proc-stats.js';

/** The PostgreSQL the pg server kinds run on: one fresh schema per launch, dropped after it. */

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** What the report says about the database server, or why it could not be used. */
export type PostgresProbe =
  | { reachable: true; description: string; settings: Record<string, string> }
  | { reachable: false; why: string };

/** The URL without its password, fit for a log line and the report. */
export const shownUrl = (url: string): string => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

/** Settings that decide what a durable commit costs, as the report records them. */
const SETTINGS = [
  'synchronous_commit',
  'fsync',
  'wal_sync_method',
  'full_page_writes',
  'commit_delay',
  'shared_buffers',
  'max_connections',
] as const;

/**
 * Checks once, with a 2 s connect timeout, whether PostgreSQL answers at `url`, and reads its version
 * and commit settings. A machine without PostgreSQL (a CI runner, a laptop) skips the pg kinds.
 */
export async function probePostgres(url: string): Promise<PostgresProbe> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    const version = (await client.query<{ v: string }>("SELECT current_setting('server_version') AS v"))
      .rows[0]?.v;
    const { rows } = await client.query<{ name: string; setting: string; unit: string | null }>(
      'SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1)',
      [SETTINGS],
    );
    const settings = Object.fromEntries(
      SETTINGS.map((name) => {
        const row = rows.find((r) => r.name === name);
        return [name, row ? withUnit(row.setting, row.unit) : '?'];
      }),
    );
    const shown = Object.entries(settings).map(([k, v]) => `${k}=${v}`);
    return {
      reachable: true,
      description: `PostgreSQL ${version} at ${shownUrl(url)}: ${shown.join(', ')}`,
      settings,
    };
  } catch (err) {
    return {
      reachable: false,
      why: `PostgreSQL unreachable at ${shownUrl(url)} (${(err as Error).message})`,
    };
  } finally {
    await client.end().catch(() => {});
  }
}

/** shared_buffers comes in 8 kB pages. */
function withUnit(setting: string, unit: string | null): string {
  if (unit === '8kB') return `${(Number(setting) * 8) / 1024} MB`;
  return unit ? `${setting} ${unit}` : setting;
}

const SCHEMA = /^th_bench_[0-9a-f]{12}$/;

/** A schema no one else uses (the server creates it at start); also the instances' application_name. */
export const freshSchema = (): string => `th_bench_${randomBytes(6).toString('hex')}`;

/**
 * DATABASE_URL for the instances of one schema: `application_name` set to the schema, so that their
 * backends can be told from every other client's (pg lets the URL's parameters override the server's).
 */
export function instanceUrl(url: string, schema: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}application_name=${schema}`;
}

/** Drops a schema made by {@link freshSchema}, with everything in it. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  // Only names freshSchema makes: a slip must never drop `public` or someone's data.
  if (!SCHEMA.test(schema)) throw new Error(`refusing to drop schema ${JSON.stringify(schema)}`);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** CPU seconds used so far, per process. */
export type CpuSnapshot = Map<number, number>;

/**
 * The CPU PostgreSQL spends for one cluster of instances: the backends serving them (found by their
 * application_name) and the server's background processes (WAL writer, checkpointer, autovacuum), which
 * work for every client but mostly for the one under load.
 */
export class DatabaseMeter {
  readonly #client: pg.Client;
  readonly #applicationName: string;

  private constructor(client: pg.Client, applicationName: string) {
    this.#client = client;
    this.#applicationName = applicationName;
  }

  static async open(url: string, applicationName: string): Promise<DatabaseMeter> {
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: 5000,
      application_name: 'taskhandle-bench',
    });
    await client.connect();
    return new DatabaseMeter(client, applicationName);
  }

  async snapshot(): Promise<CpuSnapshot> {
    const { rows } = await this.#client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE (application_name = $1 OR backend_type <> 'client backend') AND pid <> pg_backend_pid()`,
      [this.#applicationName],
    );
    return new Map(rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
  }

  close(): Promise<void> {
    return this.#client.end().catch(() => {});
  }
}

/**
 * CPU seconds between two snapshots. A process that appeared in between counts from zero; one that
 * ended in between is lost (a backend lives as long as its pooled connection, so that is rare).
 */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): number {
  let total = 0;
  for (const [pid, s] of after) {
    const from = before.get(pid);
    if (Number.isFinite(s)) total += s - (from !== undefined && Number.isFinite(from) ? from : 0);
  }
  return Math.max(0, total);
}
