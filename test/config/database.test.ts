import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/error.js';
import { settingsOfOptions } from '../../src/config/options.js';
import { loadConfig } from '../../src/config/settings.js';
import { dataLocation } from '../../src/server/listening.js';

describe('loadConfig: the store', () => {
  it('defaults to the SQLite file under ./data, with the signing keys beside it', () => {
    const c = loadConfig({});
    expect(c.database).toEqual({ kind: 'sqlite', path: './data/taskhandle.db' });
    expect(c.keysDir).toBe('data/keys');
  });

  it('takes a postgres:// URL with its schema and pool size; keys default to ./data/keys', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgresql://app@db.internal:5432/tasks?sslmode=require',
      DATABASE_SCHEMA: 'cluster_1',
      DATABASE_POOL_MAX: '20',
    });
    expect(c.database).toEqual({
      kind: 'postgres',
      url: 'postgresql://app@db.internal:5432/tasks?sslmode=require',
      schema: 'cluster_1',
      poolMax: 20,
    });
    expect(c.keysDir).toBe('data/keys');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/tasks' }).database).toMatchObject({
      schema: 'public',
      poolMax: 10,
    });
  });

  it.each([
    ['Upper', 'DATABASE_SCHEMA'],
    ['has-dash', 'DATABASE_SCHEMA'],
    ['x'.repeat(49), 'DATABASE_SCHEMA'],
  ])('refuses the schema name %s (it must be a plain lower-case SQL name)', (schema, name) => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://db/tasks', DATABASE_SCHEMA: schema })).toThrow(
      new RegExp(`${name}=`),
    );
  });

  it('never shows a password in a message or a log field', () => {
    const url = 'postgres://app:hunter2@db:5432/tasks?password=hunter3';
    // As the store's refusals name it (server/backend.ts): from the environment, and as an option.
    expect(loadConfig({ DATABASE_URL: url }).given('DATABASE_URL')).toBe(
      'DATABASE_URL=postgres://app:***@db:5432/tasks?password=***',
    );
    const option = settingsOfOptions({ database: url });
    expect(loadConfig(option.env, option.given).given('DATABASE_URL')).toBe(
      'database="postgres://app:***@db:5432/tasks?password=***"',
    );
    const refusal = (env: Record<string, string>, given = new Map<string, { shown: string }>()) => {
      try {
        loadConfig(env, given);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error('loadConfig accepted it');
    };
    expect(refusal({ DATABASE_URL: 'mysql://app:hunter2@db/tasks' })).toContain(
      'DATABASE_URL=mysql://app:***@db/tasks: expected sqlite:<path>',
    );
    const mysql = settingsOfOptions({ database: 'mysql://app:hunter2@db/tasks' });
    expect(refusal(mysql.env, mysql.given)).toContain(
      'database="mysql://app:***@db/tasks": expected sqlite:<path>',
    );
  });
});

describe('the listening line: where the data is', () => {
  it('names the SQLite file', () => {
    expect(dataLocation(loadConfig({ DATABASE_URL: 'sqlite:/srv/th/tasks.db' }))).toEqual({
      summary: 'SQLite /srv/th/tasks.db',
      fields: { kind: 'sqlite', path: '/srv/th/tasks.db' },
    });
  });

  it("names PostgreSQL's host, database and schema, never the user's password", () => {
    const where = dataLocation(
      loadConfig({
        DATABASE_URL: 'postgres://app:s3cret@db.internal:5433/tasks?password=p2',
        DATABASE_SCHEMA: 'c1',
      }),
    );
    expect(where).toEqual({
      summary: 'PostgreSQL db.internal:5433/tasks (schema c1)',
      fields: { kind: 'postgres', host: 'db.internal:5433', database: 'tasks', schema: 'c1' },
    });
    expect(JSON.stringify(where)).not.toMatch(/s3cret|p2/);
  });
});
