import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from './postgres.js';

const noPostgres = await skipWithoutPostgres();
const INTERNAL = 'Internal error; the server logged its cause';

/**
 * An internal failure (here: the store's tables gone from under a running server) tells callers
 * that it happened and nothing of its cause, on every face; the cause goes to the log.
 */
describe.skipIf(noPostgres !== undefined)('internal failures', () => {
  const schema = freshSchema();
  let agent: Agent;

  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema },
    });
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    await admin.query(`DROP TABLE ${schema}.tasks CASCADE`);
    await admin.end();
  });
  afterAll(async () => {
    await agent?.stop();
    await dropSchema(schema);
  });

  /** Nothing a caller could learn the database, its tables or the code from. */
  const revealsNothing = (text: string) => {
    expect(text).not.toMatch(/relation|tasks"|postgres|5432|\.ts:|\.js:|at [A-Za-z]+ \(/);
  };

  it('JSON-RPC: InternalError (-32603, HTTP 500) without the cause; the log has it', async () => {
    const { status, body } = await agent.rpc('GetTask', { id: 'some-task' }, V1);
    expect(status).toBe(500);
    expect(body.error).toEqual({ code: -32603, message: INTERNAL });
    revealsNothing(JSON.stringify(body));
    // The log line may arrive just after the answer.
    const logged = await eventually(async () => agent.logs.find((l) => l.msg === 'internal error'));
    expect(JSON.stringify(logged)).toMatch(/relation .*tasks.* does not exist/);
  });

  it('REST: HTTP 500 without the cause', async () => {
    const res = await fetch(`${agent.url}/rest/tasks/some-task`, { headers: agent.credentials });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).toContain(INTERNAL);
    revealsNothing(text);
  });

  it('/v1/jobs: a 500 problem document, not the framework’s stack trace page', async () => {
    const res = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      headers: { ...agent.credentials, 'Content-Type': 'application/json' },
      body: JSON.stringify({ skill: 'export', input: { rows: 1 } }),
    });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ status: 500, title: 'Internal Server Error', detail: INTERNAL });
    revealsNothing(text);
    await eventually(async () => agent.logs.find((l) => l.msg === 'request failed' && l.url === '/v1/jobs'));
  });
});
