import { afterAll, describe } from 'vitest';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from '../spec-tests/postgres.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { storeContract } from './store-contract.js';

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
});
