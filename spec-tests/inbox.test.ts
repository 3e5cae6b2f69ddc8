import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMessage, startTask } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { openSse } from './sse.js';

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

describe('the approvals inbox (HTTP): each approver sees and answers only what waits for them', () => {
  let agent: Agent;
  const inbox = (who: string | Record<string, string>, path: string, init: RequestInit = {}) => {
    const credentials = agent.as(who).credentials;
    return fetch(`${agent.url}/inbox${path}`, { ...init, headers: { ...credentials, ...init.headers } });
  };
  const waiting = async (who: string): Promise<Json> =>
    (await (await inbox(who, '/api/waiting')).json()) as Json;
  const answer = (who: string, id: string, body: unknown) =>
    inbox(who, `/api/tasks/${id}/answer`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  const approval = async (action: string, approver: string): Promise<string> => {
    const task = await startTask(agent, skillMessage('approval', { action, approver }));
    await agent.waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
    return task.id;
  };

  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'acme', carol: 'acme' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('serves the page with a strict Content-Security-Policy and no inline script', async () => {
    const res = await fetch(`${agent.url}/inbox`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    expect(html).toContain('<script type="module" src="/inbox/inbox.js"></script>');
    expect(html).not.toMatch(/<script>|<script type="module">/);
    for (const asset of ['inbox.js', 'inbox.css', 'eventsource-parser.js']) {
      const a = await fetch(`${agent.url}/inbox/${asset}`);
      expect(a.status, asset).toBe(200);
      expect(a.headers.get('content-type'), asset).toMatch(
        asset.endsWith('.css') ? /text\/css/ : /javascript/,
      );
    }
    expect(await (await fetch(`${agent.url}/inbox/eventsource-parser.js`)).text()).toContain('createParser');
  });

  it('refuses the API without credentials (401 with WWW-Authenticate)', async () => {
    for (const path of ['/api/waiting', '/api/events']) {
      const res = await inbox({}, path);
      expect(res.status, path).toBe(401);
      expect(res.headers.get('www-authenticate'), path).toBeTruthy();
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    const bad = await inbox({ 'X-API-Key': 'th_wrong' }, '/api/waiting');
    expect(bad.status).toBe(401);
  });

  it("lists bob's task to bob only, hides carol's, and bob's approval completes alice's task", async () => {
    const forBob = await approval('Deploy v2 to production', 'acme/bob');
    const forCarol = await approval('Drop the staging database', 'acme/carol');

    const bobs = await waiting('bob');
    expect(bobs.caller).toBe('acme/bob');
    expect(bobs.tasks.map((t: Json) => t.id)).toEqual([forBob]);
    const [item] = bobs.tasks;
    expect(item).toMatchObject({ skill: 'approval', requester: 'acme/alice', role: 'approver' });
    expect(item.prompt).toMatch(/^Approve or reject: Deploy v2 to production/);
    expect(item.waitedMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(item.waitingSince)).not.toBeNaN();

    expect((await waiting('carol')).tasks.map((t: Json) => t.id)).toEqual([forCarol]);
    const alices = (await waiting('alice')).tasks;
    expect(alices.map((t: Json) => t.id).sort()).toEqual([forBob, forCarol].sort());
    expect(alices.every((t: Json) => t.role === 'owner')).toBe(true);

    // Carol's task does not exist for bob: the same answer as for a task nobody has.
    const foreign = await answer('bob', forCarol, { decision: 'approve' });
    expect(foreign.status).toBe(404);
    expect(foreign.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const missing = await answer('bob', 'no-such-task', { decision: 'approve' });
    expect(missing.status).toBe(404);
    expect(((await foreign.json()) as Json).title).toBe(((await missing.json()) as Json).title);

    expect((await answer('bob', forBob, { decision: 'maybe' })).status).toBe(400);
    const ok = await answer('bob', forBob, { decision: 'approve', comment: 'go' });
    expect(ok.status).toBe(200);
    const done = await agent.waitForState(forBob, 'TASK_STATE_COMPLETED');
    expect(done.status.message.parts[0].text).toBe('Approved by acme/bob: go');
    expect((await waiting('bob')).tasks).toEqual([]);

    // A free-text answer reaches the skill the same way.
    const rejected = await answer('carol', forCarol, { text: 'reject: not today' });
    expect(rejected.status).toBe(200);
    const final = await agent.waitForState(forCarol, 'TASK_STATE_REJECTED');
    expect(final.status.message.parts[0].text).toBe('Rejected by acme/carol: not today');
  });

  it("an answer without a JSON Content-Type is a 415 as a console action is (one without any was taken: another site's page could send it)", async () => {
    const id = await approval('Rotate the keys', 'acme/bob');
    const body = JSON.stringify({ decision: 'approve' });
    // A typeless Blob, a Uint8Array: what a page of another site sends with no Content-Type, unasked.
    for (const [sent, init] of [
      ['no Content-Type', { body: new TextEncoder().encode(body) }],
      ['Content-Type "text/plain;charset=UTF-8"', { body }],
      [
        'Content-Type "application/x-www-form-urlencoded;charset=UTF-8"',
        { body: new URLSearchParams({ decision: 'approve' }) },
      ],
    ] as const) {
      const res = await inbox('bob', `/api/tasks/${id}/answer`, { method: 'POST', ...init });
      expect(res.status, sent).toBe(415);
      expect(res.headers.get('content-type'), sent).toMatch(/application\/problem\+json/);
      expect(((await res.json()) as Json).detail, sent).toBe(
        `The request has ${sent}; send its JSON body with Content-Type: application/json`,
      );
    }
    expect((await waiting('bob')).tasks.map((t: Json) => t.id)).toEqual([id]);
    expect((await answer('bob', id, { decision: 'approve' })).status).toBe(200);
    await agent.waitForState(id, 'TASK_STATE_COMPLETED');
  });

  it('tells a watching approver when a task starts waiting for them, and not for others', async () => {
    const bobStream = await openSse(`${agent.url}/inbox/api/events`, {
      headers: agent.as('bob').credentials,
    });
    const carolStream = await openSse(`${agent.url}/inbox/api/events`, {
      headers: agent.as('carol').credentials,
    });
    try {
      expect(bobStream.status).toBe(200);
      expect(bobStream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      // The stream is watching once it says so.
      for (const s of [bobStream, carolStream]) {
        await expect.poll(() => s.comments.map((c) => c.trim())).toContain('connected');
      }
      const id = await approval('Rotate the signing keys', 'acme/bob');
      const event = await bobStream.next(10_000);
      expect(event?.event).toBe('changed');
      expect(event?.id).toBeTruthy();
      expect((await waiting('bob')).tasks.map((t: Json) => t.id)).toEqual([id]);
      // Carol heard nothing: the change was not hers.
      await answer('bob', id, { decision: 'reject' });
      await agent.waitForState(id, 'TASK_STATE_REJECTED');
      expect((await bobStream.next(10_000))?.event).toBe('changed');
      expect(carolStream.raw()).not.toContain('event: changed');
    } finally {
      bobStream.close();
      carolStream.close();
    }
  });
});

describe('the approvals inbox without configured auth', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch();
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('lists and answers the anonymous caller’s own waiting tasks', async () => {
    const task = await startTask(agent, skillMessage('approval', { action: 'Ship it' }));
    await agent.waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
    const list = (await (await fetch(`${agent.url}/inbox/api/waiting`)).json()) as Json;
    expect(list.caller).toBe('anonymous');
    expect(list.tasks).toMatchObject([{ id: task.id, requester: 'anonymous', role: 'owner' }]);
    const res = await fetch(`${agent.url}/inbox/api/tasks/${task.id}/answer`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(res.status).toBe(200);
    const done = await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
    expect(done.status.message.parts[0].text).toBe('Approved by anonymous');
  });
});

describe('the approvals inbox with bearer tokens (JWT) and a rate limit', () => {
  let agent: Agent;
  let jwks: Server;
  let sign: (sub: string) => Promise<string>;
  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwks = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const issuer = 'https://issuer.inbox-tests.example';
    sign = (sub) =>
      new SignJWT({ sub, tenant: 'acme' })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setIssuer(issuer)
        .setAudience('taskhandle-inbox-tests')
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);
    agent = await launch({
      env: {
        JWT_JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/`,
        JWT_ISSUER: issuer,
        JWT_AUDIENCE: 'taskhandle-inbox-tests',
        RATE_LIMIT_PER_S: '1',
        RATE_LIMIT_BURST: '6',
      },
    });
  });
  afterAll(async () => {
    await agent?.stop();
    jwks?.closeAllConnections();
    await new Promise((resolve) => jwks?.close(resolve));
  });

  it('a token holder named as approver lists and approves; past the rate, 429 with Retry-After', async () => {
    const alice = agent.as({ Authorization: `Bearer ${await sign('alice')}` });
    const bob = { Authorization: `Bearer ${await sign('bob')}` };
    // A token's subject is named as such: "acme/bob" would be the API key of bob.
    const task = await startTask(
      alice,
      skillMessage('approval', { action: 'Renew', approver: 'jwt:acme/bob' }),
    );
    await alice.waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');

    const list = (await (await fetch(`${agent.url}/inbox/api/waiting`, { headers: bob })).json()) as Json;
    expect(list.caller).toBe('jwt:acme/bob');
    expect(list.tasks).toMatchObject([{ id: task.id, requester: 'jwt:acme/alice', role: 'approver' }]);
    const res = await fetch(`${agent.url}/inbox/api/tasks/${task.id}/answer`, {
      method: 'POST',
      headers: { ...bob, 'Content-Type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(res.status).toBe(200);
    const done = await alice.waitForState(task.id, 'TASK_STATE_COMPLETED');
    expect(done.status.message.parts[0].text).toBe('Approved by jwt:acme/bob');

    let limited: Response | undefined;
    for (let i = 0; i < 20 && !limited; i++) {
      const r = await fetch(`${agent.url}/inbox/api/waiting`, { headers: bob });
      if (r.status === 429) limited = r;
    }
    expect(limited?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited?.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });
});
