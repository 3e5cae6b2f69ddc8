import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AgentCard } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, HANDLE, legacyMessage, send, skillMessage, startTask, V1 } from './a2a.js';
import { request } from './faces.js';
import {
  type Agent,
  hashApiKey,
  launch,
  newApiKey,
  runCli,
  serveExpectingExit,
  tempDbPath,
  userMessage,
  writeApiKeys,
} from './harness.js';

/** Who may call: API keys, the 401s, what stays public, the card, the api-keys command, anonymous use. */

const rpcBody = (method: string, params: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
const V1_HEADERS = { 'A2A-Version': '1.0', 'Content-Type': 'application/json' };
const JSON_HEADERS = { 'Content-Type': 'application/json' };
/** A JWT-shaped bearer token (not verifiable by anyone). */
const FAKE_JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl';
/** The key with its last character changed. */
const tamper = (key: string): string => `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;

type Kind = 'JSON-RPC' | 'REST v1.0' | 'REST v0.3';
interface Endpoint {
  name: string;
  kind: Kind;
  method: string;
  path: (taskId: string) => string;
  headers: Record<string, string>;
  body?: () => string;
}

/** Every kind of call a caller can make, streams included, each well-formed but for the credentials. */
const ENDPOINTS: Endpoint[] = [
  ...(
    [
      ['SendMessage', () => ({ message: skillMessage('sleep', { seconds: 1 }) })],
      ['GetTask', (id: string) => ({ id })],
      ['ListTasks', () => ({})],
      ['SendStreamingMessage (SSE)', () => ({ message: skillMessage('sleep', { seconds: 1 }) })],
      ['SubscribeToTask (SSE)', (id: string) => ({ id })],
      ['GetExtendedAgentCard', () => ({})],
    ] as const
  ).map(
    ([method, params]): Endpoint => ({
      name: `JSON-RPC v1.0 ${method}`,
      kind: 'JSON-RPC',
      method: 'POST',
      path: () => '/',
      headers: V1_HEADERS,
      body: () => rpcBody(method.replace(' (SSE)', ''), params('TASK')),
    }),
  ),
  ...(
    [
      ['message/send', () => ({ message: legacyMessage([{ kind: 'text', text: 'sleep 1' }]) })],
      ['tasks/get', (id: string) => ({ id })],
      ['message/stream (SSE)', () => ({ message: legacyMessage([{ kind: 'text', text: 'sleep 1' }]) })],
      ['tasks/resubscribe (SSE)', (id: string) => ({ id })],
      ['agent/getAuthenticatedExtendedCard', () => ({})],
    ] as const
  ).map(
    ([method, params]): Endpoint => ({
      name: `JSON-RPC v0.3 ${method}`,
      kind: 'JSON-RPC',
      method: 'POST',
      path: () => '/',
      headers: JSON_HEADERS,
      body: () => rpcBody(method.replace(' (SSE)', ''), params('TASK')),
    }),
  ),
  ...(
    [
      ['POST', '/message:send', true],
      ['POST', '/message:stream', true],
      ['GET', '/tasks/TASK', false],
      ['POST', '/tasks/TASK:cancel', false],
      ['GET', '/tasks/TASK:subscribe', false],
      ['GET', '/tasks', false],
      ['GET', '/tasks/TASK/pushNotificationConfigs', false],
      ['GET', '/extendedAgentCard', false],
    ] as const
  ).map(
    ([method, path, withBody]): Endpoint => ({
      name: `REST v1.0 ${method} /rest${path}`,
      kind: 'REST v1.0',
      method,
      path: (id) => `/rest${path.replace('TASK', id)}`,
      headers: withBody ? V1_HEADERS : { 'A2A-Version': '1.0' },
      body: withBody ? () => JSON.stringify({ message: skillMessage('sleep', { seconds: 1 }) }) : undefined,
    }),
  ),
  ...(
    [
      ['POST', '/message:send', true],
      ['POST', '/message:stream', true],
      ['GET', '/tasks/TASK', false],
      ['POST', '/tasks/TASK:cancel', false],
      ['GET', '/tasks/TASK:subscribe', false],
      ['GET', '/tasks/TASK/pushNotificationConfigs', false],
      ['GET', '/card', false],
    ] as const
  ).map(
    ([method, path, withBody]): Endpoint => ({
      name: `REST v0.3 ${method} /rest/v1${path}`,
      kind: 'REST v0.3',
      method,
      path: (id) => `/rest/v1${path.replace('TASK', id)}`,
      headers: withBody ? JSON_HEADERS : {},
      body: withBody
        ? () =>
            JSON.stringify({
              message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', content: [{ text: 'sleep 1' }] },
            })
        : undefined,
    }),
  ),
];

// biome-ignore lint/suspicious/noExplicitAny: cards are inspected freely in tests
const getJson = async (url: string, headers: Record<string, string> = {}): Promise<any> => {
  const res = await fetch(url, { headers });
  expect(res.status, url).toBe(200);
  return res.json();
};

describe('API keys: callers without valid credentials get 401', () => {
  let agent: Agent;
  let taskId: string;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme' }, as: null });
    taskId = (await startTask(agent.as('alice'), skillMessage('sleep', { seconds: 600 }))).id;
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** [what, the headers sent, whether they carry credentials that are wrong (RFC 6750 invalid_token)] */
  const variants: [string, () => Record<string, string>, boolean][] = [
    ['no credentials', () => ({}), false],
    ['an unknown key in X-API-Key', () => ({ 'X-API-Key': newApiKey() }), true],
    ['an unknown key as Authorization: Bearer', () => ({ Authorization: `Bearer ${newApiKey()}` }), true],
    ["alice's key with one character changed", () => ({ 'X-API-Key': tamper(agent.keys.alice ?? '') }), true],
    [
      "alice's key as Authorization: Basic",
      () => ({ Authorization: `Basic ${Buffer.from(`alice:${agent.keys.alice}`).toString('base64')}` }),
      false,
    ],
    ['a JWT, while only API keys are configured', () => ({ Authorization: `Bearer ${FAKE_JWT}` }), true],
  ];

  it.each(variants)(
    '%s: 401 with WWW-Authenticate on every face and stream',
    async (_, credentials, invalid) => {
      for (const e of ENDPOINTS) {
        const sent = credentials();
        const r = await request(`${agent.url}${e.path(taskId)}`, {
          method: e.method,
          headers: { ...e.headers, ...sent },
          body: e.body?.(),
        });
        const what = `${e.name}: ${JSON.stringify(r.body)}`;
        expect(r.status, what).toBe(401);
        expect(r.headers.get('content-type'), what).toMatch(/json/);
        const challenge = r.headers.get('www-authenticate') ?? '';
        expect(challenge, what).toMatch(/^Bearer realm="taskhandle"/);
        // RFC 6750 3.1: an error code only when credentials were sent and are wrong.
        if (invalid) expect(challenge, what).toContain('error="invalid_token"');
        else expect(challenge, what).not.toContain('error=');
        if (e.kind === 'JSON-RPC') {
          expect(r.body, what).toMatchObject({ jsonrpc: '2.0', error: { code: -32050 } });
          expect(r.body, what).not.toHaveProperty('result');
        } else if (e.kind === 'REST v1.0') {
          expect(r.body, what).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
        } else {
          expect(r.body, what).toMatchObject({ code: -32050 });
        }
        const message = JSON.stringify(r.body);
        expect(message, what).toMatch(/credential|key|token|Bearer/i);
        // Nothing of what was sent comes back, nor anything of the task.
        for (const value of Object.values(sent)) expect(message, what).not.toContain(value.split(' ').at(-1));
        expect(message, what).not.toContain(taskId);
      }
    },
  );

  it('nothing a refused request asked for was done', async () => {
    const { body } = await agent.as('alice').rpc('ListTasks', {}, V1);
    expect(body.result.tasks.map((t: { id: string }) => t.id)).toEqual([taskId]);
    expect((await agent.as('alice').rpc('GetTask', { id: taskId }, V1)).body.result.status.state).toBe(
      'TASK_STATE_WORKING',
    );
  });

  it('the agent card, /.well-known/jwks.json and /healthz stay public (also with a wrong key)', async () => {
    const sent: Record<string, string>[] = [
      {},
      { 'X-API-Key': newApiKey() },
      { Authorization: 'Bearer nonsense' },
    ];
    for (const headers of sent) {
      expect((await getJson(`${agent.url}/.well-known/agent-card.json`, headers)).name).toBe('taskhandle');
      expect((await getJson(`${agent.url}/.well-known/jwks.json`, headers)).keys.length).toBeGreaterThan(0);
      expect(await getJson(`${agent.url}/healthz`, headers)).toEqual({ status: 'ok' });
    }
  });

  it('a key is accepted in X-API-Key and as Authorization: Bearer (the scheme in any case)', async () => {
    const key = agent.keys.alice ?? '';
    const ways: Record<string, string>[] = [
      { 'X-API-Key': key },
      { Authorization: `Bearer ${key}` },
      { Authorization: `bearer ${key}` },
    ];
    for (const headers of ways) {
      const who = agent.as(headers);
      const { status, body } = await who.rpc('GetTask', { id: taskId }, V1);
      expect(status, JSON.stringify(headers)).toBe(200);
      expect(body.result.id).toBe(taskId);
      const rest = await request(`${agent.url}/rest/v1/tasks/${taskId}`, { headers });
      expect(rest.status).toBe(200);
    }
  });

  it('the keys file holds hashes only', () => {
    const file = readFileSync(agent.keysFile ?? '', 'utf8');
    expect(file).not.toContain(agent.keys.alice);
    expect(JSON.parse(file)).toEqual([
      expect.objectContaining({
        principal: 'alice',
        tenant: 'acme',
        keyHash: hashApiKey(agent.keys.alice ?? ''),
      }),
    ]);
  });

  it('the card says how to authenticate: an API key in X-API-Key (v1.0 and v0.3 shapes)', async () => {
    const card = await getJson(`${agent.url}/.well-known/agent-card.json`);
    expect(Object.keys(card.securitySchemes)).toEqual(['apiKey']);
    expect(card.securitySchemes.apiKey).toMatchObject({
      // v1.0 (proto JSON oneof)
      apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' },
      // v0.3 (OpenAPI style)
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
    expect(card.securityRequirements).toEqual([{ schemes: { apiKey: { list: [] } } }]);
    expect(card.security).toEqual([{ apiKey: [] }]);
    expect(card.capabilities.extendedAgentCard).toBe(true);
    // The SDK's v1.0 codec reads the scheme.
    const parsed = AgentCard.fromJSON(card);
    expect(parsed.securitySchemes.apiKey?.scheme).toMatchObject({
      $case: 'apiKeySecurityScheme',
      value: { location: 'header', name: 'X-API-Key' },
    });
  });

  it('v0.3 clients learn of the extended card too (supportsAuthenticatedExtendedCard)', async () => {
    const card = await getJson(`${agent.url}/.well-known/agent-card.json`);
    expect(card.supportsAuthenticatedExtendedCard).toBe(true);
  });
});

describe('the extended agent card (EXTENDED_SKILLS=sleep)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme' }, env: { EXTENDED_SKILLS: 'sleep' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const skillIds = (card: { skills: { id: string }[] }) => card.skills.map((s) => s.id);

  it('the public card leaves the skill out', async () => {
    const card = await getJson(`${agent.url}/.well-known/agent-card.json`);
    expect(skillIds(card)).toEqual(['export', 'approval', 'batch']);
    expect(card.capabilities.extendedAgentCard).toBe(true);
  });

  it('authenticated callers get every skill, on every face', async () => {
    const v1 = await agent.rpc('GetExtendedAgentCard', {}, V1);
    expect(v1.body.error).toBeUndefined();
    expect(skillIds(v1.body.result)).toEqual(['export', 'sleep', 'approval', 'batch']);
    expect(v1.body.result.name).toBe('taskhandle');
    expect(Object.keys(v1.body.result.securitySchemes)).toEqual(['apiKey']);

    const v03 = await agent.rpc('agent/getAuthenticatedExtendedCard', {});
    expect(v03.body.error).toBeUndefined();
    expect(skillIds(v03.body.result)).toEqual(['export', 'sleep', 'approval', 'batch']);

    const rest = await request(`${agent.url}/rest/extendedAgentCard`, {
      headers: { 'A2A-Version': '1.0', ...agent.credentials },
    });
    expect(rest.status).toBe(200);
    expect(skillIds(rest.body)).toEqual(['export', 'sleep', 'approval', 'batch']);
    const legacyRest = await request(`${agent.url}/rest/v1/card`, { headers: agent.credentials });
    expect(legacyRest.status).toBe(200);
    expect(skillIds(legacyRest.body)).toEqual(['export', 'sleep', 'approval', 'batch']);
  });

  it('without credentials it is 401', async () => {
    const { status, body } = await agent.as({}).rpc('GetExtendedAgentCard', {}, V1);
    expect(status).toBe(401);
    expect(body.error.code).toBe(-32050);
  });
});

describe('taskhandle api-keys add', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** Polls until `who` is let in; returns how long that took. */
  const admitted = async (who: Agent): Promise<number> => {
    const since = Date.now();
    await eventually(
      async () => ((await who.rpc('ListTasks', {}, V1)).status === 200 ? true : undefined),
      8000,
    );
    return Date.now() - since;
  };

  it('prints a new key, stores its hash, and the running server accepts it within ~3 s', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 1 }));
    const file = agent.keysFile ?? '';
    const { code, stdout, stderr } = await runCli(
      ['api-keys', 'add', '--principal', 'dave', '--tenant', 'acme', '--label', 'laptop'],
      { API_KEYS_FILE: file },
    );
    expect(code, stderr).toBe(0);
    const printed = JSON.parse(stdout);
    expect(printed).toMatchObject({ principal: 'dave', tenant: 'acme', file });
    expect(printed.apiKey).toMatch(/^th_[A-Za-z0-9_-]{43}$/);

    const stored = readFileSync(file, 'utf8');
    expect(stored).not.toContain(printed.apiKey);
    expect(JSON.parse(stored)).toEqual([
      expect.objectContaining({ principal: 'alice', tenant: 'acme' }),
      { principal: 'dave', tenant: 'acme', keyHash: hashApiKey(printed.apiKey), label: 'laptop' },
    ]);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const dave = agent.as({ 'X-API-Key': printed.apiKey });
    expect(await admitted(dave)).toBeLessThan(3500);
    // dave is in alice's tenant, but another principal: her task is not his.
    expect((await dave.rpc('GetTask', { id: task.id }, V1)).body.error.code).toBe(-32001);
    expect((await dave.rpc('ListTasks', {}, V1)).body.result.tasks ?? []).toEqual([]);
    // alice's key still works.
    expect((await agent.rpc('GetTask', { id: task.id }, V1)).body.result.id).toBe(task.id);
  });

  it('a server started with an empty keys file refuses everyone, then takes the first key added', async () => {
    // A missing file stops the start (startup.test.ts): an operator who means "no keys yet" says so.
    const file = join(dirname(tempDbPath()), 'api-keys.json');
    writeFileSync(file, '[]\n');
    const server = await launch({ env: { API_KEYS_FILE: file } });
    try {
      expect((await server.rpc('ListTasks', {}, V1)).status).toBe(401);
      const card = await getJson(`${server.url}/.well-known/agent-card.json`);
      expect(Object.keys(card.securitySchemes)).toEqual(['apiKey']);
      const { code, stdout, stderr } = await runCli(
        ['api-keys', 'add', '--principal', 'erin', '--tenant', 'initech'],
        {
          API_KEYS_FILE: file,
        },
      );
      expect(code, stderr).toBe(0);
      const erin = server.as({ Authorization: `Bearer ${JSON.parse(stdout).apiKey}` });
      expect(await admitted(erin)).toBeLessThan(3500);
      const { task } = await send(erin, userMessage('export 1 row'));
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    } finally {
      await server.stop();
    }
  });

  it('a server whose keys file is deleted keeps the keys it had and logs an error', async () => {
    const written = writeApiKeys({ gail: 'acme' });
    const server = await launch({ apiKeysFile: written, as: 'gail' });
    try {
      expect((await server.rpc('ListTasks', {}, V1)).status).toBe(200);
      rmSync(written.file);
      // The file is looked at on use, every 2 s at most: keep calling, as callers do.
      await eventually(async () => {
        expect((await server.rpc('ListTasks', {}, V1)).status).toBe(200);
        return server.logs.find((l) => String(l.msg).includes('the file is gone'));
      }, 8000);
      expect(server.logs.find((l) => String(l.msg).includes('the file is gone'))?.level).toBe(50);
    } finally {
      await server.stop();
    }
  });

  it("makes the keys file's folder when there is none yet (a fresh checkout's ./data), private", async () => {
    const file = join(dirname(tempDbPath()), 'new', 'keys', 'api-keys.json');
    const { code, stderr } = await runCli(['api-keys', 'add', '--principal', 'fay', '--tenant', 'acme'], {
      API_KEYS_FILE: file,
    });
    expect(code, stderr).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual([expect.objectContaining({ principal: 'fay' })]);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
  });

  it('refuses without --principal or --tenant (a usage error, exit 2), or without API_KEYS_FILE (exit 78)', async () => {
    const file = join(dirname(tempDbPath()), 'api-keys.json');
    const noTenant = await runCli(['api-keys', 'add', '--principal', 'x'], { API_KEYS_FILE: file });
    expect(noTenant.code).toBe(2);
    expect(noTenant.stderr).toContain('--tenant');
    const noFile = await runCli(['api-keys', 'add', '--principal', 'x', '--tenant', 'y']);
    expect(noFile.code).toBe(78);
    expect(noFile.stderr).toContain('API_KEYS_FILE');
  });
});

describe('anonymous use (no authentication configured)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: { ANONYMOUS_MAX_TTL_MS: '60000' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** 48 bits of time, then 128 random bits: 44 hex digits. */
  const RANDOM_ID = /^[0-9a-f]{44}$/;

  it('task ids carry 128 random bits (44 hex digits: time, then randomness), not UUIDs, on every face', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await startTask(agent, skillMessage('sleep', { seconds: 0 }))).id);
    const v03 = await agent.rpc('message/send', {
      message: legacyMessage([{ kind: 'text', text: 'sleep 0' }]),
      configuration: { blocking: false },
    });
    ids.push(v03.body.result.id);
    const rest = await request(`${agent.url}/rest/message:send`, {
      method: 'POST',
      headers: V1_HEADERS,
      body: JSON.stringify({ message: userMessage('sleep 0'), configuration: { returnImmediately: true } }),
    });
    ids.push(rest.body.task.id);
    for (const id of ids) expect(id).toMatch(RANDOM_ID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('the id alone reaches the task (no credentials needed)', async () => {
    const task = await startTask(agent, skillMessage('sleep', { seconds: 600 }));
    expect((await agent.rpc('GetTask', { id: task.id }, V1)).body.result.id).toBe(task.id);
    const canceled = await agent.rpc('tasks/cancel', { id: task.id });
    expect(canceled.body.result.status.state).toBe('canceled');
  });

  it('ListTasks answers nothing, whatever the filter (no enumeration), over JSON-RPC and REST', async () => {
    const contextId = crypto.randomUUID();
    const { task } = await send(agent, skillMessage('export', { rows: 1 }, { contextId }));
    for (const params of [{}, { contextId }, { status: 'TASK_STATE_COMPLETED' }, { pageSize: 100 }]) {
      const { body } = await agent.rpc('ListTasks', params, V1);
      expect(body.result.tasks ?? [], JSON.stringify(params)).toEqual([]);
      expect(body.result.totalSize ?? 0).toBe(0);
      expect(body.result.nextPageToken ?? '').toBe('');
    }
    const rest = await request(`${agent.url}/rest/tasks?contextId=${contextId}`, {
      headers: { 'A2A-Version': '1.0' },
    });
    expect(rest.status).toBe(200);
    expect(rest.body.tasks ?? []).toEqual([]);
    expect(JSON.stringify(rest.body)).not.toContain(task.id);
  });

  it('retention is capped by ANONYMOUS_MAX_TTL_MS', async () => {
    for (const skill of ['export', 'sleep']) {
      const task = await startTask(
        agent,
        skillMessage(skill, skill === 'export' ? { rows: 1 } : { seconds: 0 }),
      );
      const handle = task.metadata[HANDLE];
      expect(handle.ttlMs, skill).toBe(60_000);
      expect(Date.parse(handle.expiresAt) - Date.parse(handle.createdAt)).toBe(60_000);
    }
  });

  it('the card offers no security schemes and no extended card; GetExtendedAgentCard is -32007', async () => {
    const card = await getJson(`${agent.url}/.well-known/agent-card.json`);
    expect(card.securitySchemes ?? {}).toEqual({});
    expect(card.securityRequirements ?? []).toEqual([]);
    expect(card.security ?? []).toEqual([]);
    expect(card.capabilities.extendedAgentCard).toBe(false);
    expect((await agent.rpc('GetExtendedAgentCard', {}, V1)).body.error?.code).toBe(-32007);
    const legacy = await agent.rpc('agent/getAuthenticatedExtendedCard', {}, { version: '0.3' });
    expect(legacy.body.error?.code).toBe(-32007);
  });
});

describe('anonymous use on an address other machines reach', () => {
  it.each(['0.0.0.0', '::'])(
    'HOST=%s without authentication is refused (exit 78), naming ALLOW_ANONYMOUS',
    async (host) => {
      const { code, stderr } = await serveExpectingExit({ HOST: host });
      expect(code).toBe(78);
      expect(stderr).toContain(`HOST=${host}`);
      expect(stderr).toContain('ALLOW_ANONYMOUS=true');
      expect(stderr).toContain('API_KEYS_FILE');
    },
  );

  /** The server on 0.0.0.0, reached on loopback. */
  const loopback = (agent: Agent) => agent.url.replace('0.0.0.0', '127.0.0.1');

  it('ALLOW_ANONYMOUS=true starts it', async () => {
    const agent = await launch({ env: { HOST: '0.0.0.0', ALLOW_ANONYMOUS: 'true' } });
    try {
      expect(await getJson(`${loopback(agent)}/healthz`)).toEqual({ status: 'ok' });
    } finally {
      await agent.stop();
    }
  });

  it('with API keys it starts without ALLOW_ANONYMOUS, and requires them', async () => {
    const agent = await launch({ apiKeys: { alice: 'acme' }, env: { HOST: '0.0.0.0' } });
    try {
      const url = `${loopback(agent)}/`;
      const body = rpcBody('ListTasks', {});
      expect((await request(url, { method: 'POST', headers: V1_HEADERS, body })).status).toBe(401);
      const ok = await request(url, {
        method: 'POST',
        headers: { ...V1_HEADERS, ...agent.credentials },
        body,
      });
      expect(ok.status).toBe(200);
    } finally {
      await agent.stop();
    }
  });
});

describe('identity settings', () => {
  const dir = dirname(tempDbPath());
  const notJson = join(dir, 'not-json.json');
  writeFileSync(notJson, 'alice=acme\n');
  const badHash = join(dir, 'bad-hash.json');
  writeFileSync(badHash, JSON.stringify([{ principal: 'a', tenant: 't', keyHash: 'md5:0123' }]));
  const jwt = { JWT_ISSUER: 'https://issuer.test', JWT_AUDIENCE: 'taskhandle' };
  const jwks = 'http://127.0.0.1:9/jwks.json';

  it.each([
    ['a JWT issuer without keys', 'JWT_JWKS_URL', jwt],
    ['a JWKS without issuer', 'JWT_ISSUER', { JWT_JWKS_URL: jwks, JWT_AUDIENCE: 'x' }],
    ['a JWKS without audience', 'JWT_AUDIENCE', { JWT_JWKS_URL: jwks, JWT_ISSUER: 'x' }],
    [
      'two key sources',
      'JWT_JWKS_FILE',
      { ...jwt, JWT_JWKS_URL: jwks, JWT_JWKS_FILE: join(dir, 'jwks.json') },
    ],
    ['a JWKS URL that is not http(s)', 'JWT_JWKS_URL', { ...jwt, JWT_JWKS_URL: 'ftp://keys.example/jwks' }],
    ['a JWKS file that is not there', 'JWT_JWKS_FILE', { ...jwt, JWT_JWKS_FILE: join(dir, 'missing.json') }],
    ['a keys file that is not JSON', 'API_KEYS_FILE', { API_KEYS_FILE: notJson }],
    ['a keys file with a bad hash', 'keyHash', { API_KEYS_FILE: badHash }],
    ['an extended skill that does not exist', 'EXTENDED_SKILLS', { EXTENDED_SKILLS: 'teleport' }],
    ['ALLOW_ANONYMOUS that is not true or false', 'ALLOW_ANONYMOUS', { ALLOW_ANONYMOUS: 'yes' }],
    ['an operator entry of no known form', 'OPERATORS=ops: "ops": each entry must be', { OPERATORS: 'ops' }],
    ['a webhook allow-list entry that is no address', 'PUSH_ALLOW=10.0.0: ', { PUSH_ALLOW: '10.0.0' }],
  ])('%s stops the start (exit 78), naming %s', async (_, names, env) => {
    const { code, stderr } = await serveExpectingExit(env as Record<string, string>);
    expect(code).toBe(78);
    expect(stderr).toContain(names);
  });
});
