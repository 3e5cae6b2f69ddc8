import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe } from 'vitest';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { storeContract } from './store-contract.js';

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function reachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    console.warn(`PostgreSQL not reachable at ${url}: skipping the PostgreSQL store contract`);
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const schemas: string[] = [];
afterAll(async () => {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await client.end();
});

describe.skipIf(!(await reachable()))('PostgresStore', () => {
  // Each test its own schema: the contract runs unchanged, as on a fresh database.
  storeContract('postgres (fresh schema)', async () => {
    const schema = `th_test_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    return PostgresStore.open({ url, schema, poolMax: 10 });
  });
});
