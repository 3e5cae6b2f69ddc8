import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, launch } from './harness.js';

describe('RATE_LIMIT_PER_S: requests per second per principal', () => {
  let agent: Agent;
  beforeAll(async () => {
    // Far below what any test sends, so that the burst is used up by the requests below alone.
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'globex' },
      env: { RATE_LIMIT_PER_S: '1', RATE_LIMIT_BURST: '3' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const get = (who: string, version: '1.0' | '0.3') =>
    agent.as(who).rpc(version === '1.0' ? 'GetTask' : 'tasks/get', { id: 'nope' }, { version });

  it('answers 429 with Retry-After once a principal is over its burst, on JSON-RPC and REST, and spares others', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await get('alice', '1.0')).status);
    expect(statuses).toEqual([200, 200, 200]); // TaskNotFound errors, answered
    const over = await get('alice', '1.0');
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe(-32051);
    expect(over.body.error.message).toMatch(/Rate limited/);

    const rest = await fetch(`${agent.url}/rest/tasks/nope`, {
      headers: { 'A2A-Version': '1.0', 'X-API-Key': agent.keys.alice as string },
    });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await rest.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });
    const legacy = await fetch(`${agent.url}/rest/v1/tasks/nope`, {
      headers: { 'X-API-Key': agent.keys.alice as string },
    });
    expect(legacy.status).toBe(429);
    expect(await legacy.json()).toMatchObject({ code: -32051 });

    // Another principal has its own budget, and the public endpoints are not counted.
    expect((await get('bob', '0.3')).status).toBe(200);
    expect((await fetch(`${agent.url}/.well-known/agent-card.json`)).status).toBe(200);
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
  });
});
