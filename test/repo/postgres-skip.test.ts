import { describe, expect, it } from 'vitest';
import { freePort } from '../../spec-tests/harness.js';
import { postgresUrl, whyNoPostgres } from '../../spec-tests/postgres.js';

const serverUp = (await whyNoPostgres(new URL('/postgres', postgresUrl).href)) === undefined;

describe('why the PostgreSQL tests are skipped', () => {
  it('no server at the address: "server unreachable", with what to do', async () => {
    const why = await whyNoPostgres(`postgres://postgres@127.0.0.1:${await freePort()}/test`);
    expect(why).toMatch(
      /^PostgreSQL server unreachable at postgres:\/\/postgres@127\.0\.0\.1:\d+\/test \(.*ECONNREFUSED/,
    );
    expect(why).toContain('TEST_DATABASE_URL');
  });

  it.skipIf(!serverUp)(
    'a server without the database: "database missing", naming it and createdb',
    async () => {
      const url = new URL('/th_no_such_database', postgresUrl).href;
      const why = await whyNoPostgres(url);
      expect(why).toContain('PostgreSQL database missing');
      expect(why).toContain('no database "th_no_such_database"');
      expect(why).toContain('createdb');
    },
  );
});
