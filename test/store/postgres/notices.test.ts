import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from '../../../spec-tests/postgres.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { newTask } from '../contract/context.js';

type LogRecord = Record<string, unknown> & { level: number; msg: string };

/** A logger at debug whose records land in `records`. */
function capture(): { logger: pino.Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) records.push(JSON.parse(line));
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), records };
}

const notices = (records: LogRecord[]) => records.filter((r) => r.msg === 'store: a notice from PostgreSQL');

/** Runs `sql` on its own connection, beside the store's. */
async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe.skipIf((await skipWithoutPostgres()) !== undefined)(
  "PostgreSQL's notices in the store's log",
  () => {
    const schemas: string[] = [];
    const stores: PostgresStore[] = [];
    const open = async (schema: string, logger: pino.Logger) => {
      const store = await PostgresStore.open({ url: postgresUrl, schema, poolMax: 2, logger });
      stores.push(store);
      return store;
    };
    afterEach(async () => {
      for (const s of stores.splice(0)) await s.close();
      for (const s of schemas.splice(0)) await dropSchema(s);
    });

    it('a RAISE WARNING or NOTICE during a write is logged at warn, once each (pg dropped them)', async () => {
      const schema = freshSchema();
      schemas.push(schema);
      const { logger, records } = capture();
      const store = await open(schema, logger);
      // What a trigger an operator adds says on each insert.
      await admin(`
      CREATE FUNCTION ${schema}.say() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE WARNING 'task % is new', NEW.id USING HINT = 'a hint';
        RAISE NOTICE 'and noted';
        RETURN NEW;
      END $$;
      CREATE TRIGGER say AFTER INSERT ON ${schema}.tasks FOR EACH ROW EXECUTE FUNCTION ${schema}.say();`);
      const before = notices(records).length;
      // More creates than connections, one after another and at once: each connection is reused.
      const tasks = [0, 1, 2, 3, 4, 5, 6].map(() => newTask());
      for (const task of tasks.slice(0, 3)) await store.createTask(task);
      await Promise.all(tasks.slice(3).map((task) => store.createTask(task)));
      const ids = tasks.map((task) => task.id);
      const said = notices(records).slice(before);
      expect(
        said
          .filter((r) => r.severity === 'WARNING')
          .map((r) => r.message)
          .sort(),
      ).toEqual(ids.map((id) => `task ${id} is new`).sort());
      expect(said.filter((r) => r.severity === 'NOTICE')).toHaveLength(ids.length);
      expect(said.every((r) => r.level === 40)).toBe(true);
      expect(said.find((r) => r.severity === 'WARNING')).toMatchObject({
        code: '01000',
        hint: 'a hint',
        where: expect.stringContaining('PL/pgSQL function'),
      });
    });

    it("a schema opened again logs its migration's IF NOT EXISTS notices at debug, and nothing at warn", async () => {
      const schema = freshSchema();
      schemas.push(schema);
      await (await open(schema, capture().logger)).close();
      const { logger, records } = capture();
      await open(schema, logger);
      expect(notices(records).map((r) => [r.level, r.code])).toEqual([
        [20, '42P06'],
        [20, '42P07'],
      ]);
      expect(records.filter((r) => r.level >= 40)).toEqual([]);
    });
  },
);
