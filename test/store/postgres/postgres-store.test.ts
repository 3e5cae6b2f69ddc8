import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from '../../../spec-tests/postgres.js';
import { MIGRATIONS } from '../../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { storeContract } from '../contract.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas.splice(0)) await dropSchema(s);
});

describe.skipIf((await skipWithoutPostgres()) !== undefined)('PostgresStore', () => {
  // Each test its own schema: the contract runs unchanged, as on a fresh database.
  storeContract('postgres (fresh schema)', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    return PostgresStore.open({ url: postgresUrl, schema, poolMax: 10 });
  });

  it('refuses a schema migrated by a newer taskhandle, naming both versions', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    await (await PostgresStore.open({ url: postgresUrl, schema, poolMax: 1 })).close();
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`INSERT INTO ${schema}.schema_migrations VALUES (999, 'from the future', 0)`);
    await admin.end();
    const newest = Math.max(...MIGRATIONS.map((m) => m.version));
    await expect(PostgresStore.open({ url: postgresUrl, schema, poolMax: 1 })).rejects.toThrow(
      `schema ${schema} is at migration 999, newer than this taskhandle knows (${newest}): run a newer version`,
    );
  });
});
