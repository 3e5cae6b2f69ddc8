import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL the store and multi-instance tests use: TEST_DATABASE_URL, else the local one CI starts. */
export const postgresUrl: string = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The URL without its password, fit for a log line. */
const shown = (url: string): string => url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');

/**
 * Why PostgreSQL cannot be used here (the URL tried and the error), or undefined when it can.
 * Connecting gives up after 2 s: a machine without PostgreSQL must not slow `npm test` down.
 */
export async function whyNoPostgres(url = postgresUrl): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (err) {
    return `${whyNot(err as Error & { code?: string }, url)}: this file's PostgreSQL tests are skipped`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** What went wrong, in words that tell a missing database from a server that is not there. */
function whyNot(err: Error & { code?: string }, url: string): string {
  const database = decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
  const host = new URL(url).host;
  // 3D000 invalid_catalog_name: the server answered, the database is not there.
  if (err.code === '3D000')
    return `PostgreSQL database missing: the server at ${host} answers but has no database "${database}" (create it: createdb -h ${new URL(url).hostname} -U postgres ${database}, as .ci/run does)`;
  // 28xxx: the server answered and refused the credentials.
  if (err.code?.startsWith('28'))
    return `PostgreSQL refused the login at ${shown(url)} (${err.message}): fix TEST_DATABASE_URL's user or password`;
  return `PostgreSQL server unreachable at ${shown(url)} (${err.message}): start it (as .ci/run does) or set TEST_DATABASE_URL`;
}

/** Whether PostgreSQL answers at `url` within 2 s. */
export const postgresReachable = async (url = postgresUrl): Promise<boolean> =>
  (await whyNoPostgres(url)) === undefined;

/**
 * Why this file's PostgreSQL tests are skipped, or undefined when they run; says so once on stderr.
 * @example
 *   const noPostgres = await skipWithoutPostgres();
 *   describe.skipIf(noPostgres !== undefined)('a cluster', () => { ... });
 */
export async function skipWithoutPostgres(): Promise<string | undefined> {
  const why = await whyNoPostgres();
  if (why) console.warn(why);
  return why;
}

const SCHEMA_NAME = /^th_test_[0-9a-f]+$/;

/** A schema name no other test uses (the server creates it at start). */
export const freshSchema = (): string => `th_test_${randomBytes(6).toString('hex')}`;

/** Drops a schema made for a test, with everything in it. */
export async function dropSchema(name: string, url = postgresUrl): Promise<void> {
  // Only names freshSchema makes: a slip must never drop `public` or someone's data.
  if (!SCHEMA_NAME.test(name)) throw new Error(`refusing to drop schema ${JSON.stringify(name)}`);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  } finally {
    await client.end();
  }
}
