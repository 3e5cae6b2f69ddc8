import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from '../../../spec-tests/postgres.js';
import { MIGRATIONS } from '../../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { STATEMENTS } from '../../../src/store/postgres/statements.js';
import { storeContract } from '../contract.js';

const schemas: string[] = [];
afterAll(async () => {
  for (const s of schemas.splice(0)) await dropSchema(s);
});

/** Runs `work` with a connection to a schema the store has just migrated (no statistics yet). */
async function onFreshSchema(work: (client: pg.Client) => Promise<void>): Promise<void> {
  const schema = freshSchema();
  schemas.push(schema);
  await (await PostgresStore.open({ url: postgresUrl, schema, poolMax: 1 })).close();
  const client = new pg.Client({ connectionString: postgresUrl, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

describe.skipIf((await skipWithoutPostgres()) !== undefined)('PostgresStore', () => {
  // Each test its own schema: the contract runs unchanged, as on a fresh database.
  storeContract('postgres (fresh schema)', async () => {
    const schema = freshSchema();
    schemas.push(schema);
    return PostgresStore.open({ url: postgresUrl, schema, poolMax: 10 });
  });

  // A custom plan is made again on each execution: for a transition's write that was half of the
  // database's CPU a write. The planner judges from its row estimates, so a clause it cannot bound
  // (generate_series over a parameter: 1,000 rows) can turn every write back into a custom plan.
  it("plans a transition's write once per connection: its generic plan is the one chosen", async () => {
    await onFreshSchema(async (client) => {
      // What a job's ending sends (postgres-store.ts write): two events, the lease released.
      const values = [
        'no-such-task',
        ['working'],
        'completed',
        null,
        null,
        null,
        'lease',
        true,
        2,
        Date.now(),
        null,
        null,
        ['artifact', 'status'],
        ['{}', '{}'],
        [2],
        'channel',
        'notice',
        0,
        null,
        null,
        null,
        null,
        null,
        null,
      ];
      for (let i = 0; i < 10; i++) await client.query({ ...STATEMENTS.guardedWrite, values });
      const { rows } = await client.query(
        'SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1',
        [STATEMENTS.guardedWrite.name],
      );
      // The first five are custom (PostgreSQL's rule); the rest use the generic plan.
      expect(rows).toEqual([{ generic: 5, custom: 5 }]);
    });
  });

  // With no statistics the planner guesses: it ANDed a bitmap of tasks_by_expiry (every stored task)
  // to the few rows an owner or a state's partial index gives, so a read cost what the table holds.
  it('on a schema without statistics, no read of live tasks walks the expiry index', async () => {
    await onFreshSchema(async (client) => {
      await client.query(`INSERT INTO tasks (id, context_id, owner, skill, state, created_at, updated_at,
          expires_at, ttl_ms, poll_interval_ms, tenant, queue_at)
        SELECT 't' || g, 'c' || g, 'o' || (g % 50), 'sleep',
          (ARRAY['working', 'submitted', 'input-required', 'completed'])[1 + g % 4], g, g, 9e12, 1, 1, 'acme', g
        FROM generate_series(1, 20000) g`);
      const plans: Record<string, string> = {};
      const plan = async (name: keyof typeof STATEMENTS, args: string) => {
        await client.query(`PREPARE ${name} AS ${STATEMENTS[name].text}`);
        const { rows } = await client.query(`EXPLAIN EXECUTE ${name}(${args})`);
        plans[name] = rows.map((r) => r['QUERY PLAN']).join('\n');
      };
      await plan('queueCounts', "'t2', 'o2', 2, 0, 'acme', 250, 'sleep'");
      await plan('claimView', '0, 4, NULL, NULL');
      await plan('listTasks', "'o2', 0, NULL, NULL, NULL, NULL, NULL, 51");
      await plan('countTasks', "'o2', 0, NULL, NULL, NULL");
      await plan('waiting', "'o2', NULL, 0, 50");
      for (const [name, text] of Object.entries(plans))
        expect({ name, text }).not.toMatchObject({ text: expect.stringContaining('tasks_by_expiry') });
    });
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
