import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, send, skillMessage, V1 } from './a2a.js';
import { request } from './faces.js';
import { type Agent, launch } from './harness.js';

/**
 * JWT bearer tokens, verified against the issuer's JWKS (served here on loopback): which tokens are
 * let in, who they make the caller, and key rotation.
 */

const ISSUER = 'https://issuer.spec-tests.example';
const AUDIENCE = 'taskhandle-spec-tests';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** The public key as the issuer publishes it. */
  jwk: JWK;
}

async function newKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/** An issuer's JWKS endpoint: each path serves the keys published on it, and counts its fetches. */
class Jwks {
  readonly #sets = new Map<string, JWK[]>();
  readonly #fetches = new Map<string, number>();
  #server?: Server;
  url = '';

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const path = req.url ?? '';
      const keys = this.#sets.get(path);
      this.#fetches.set(path, (this.#fetches.get(path) ?? 0) + 1);
      if (!keys) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys }));
    });
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  publish(path: string, keys: SigningKey[]): void {
    this.#sets.set(
      path,
      keys.map((k) => k.jwk),
    );
  }

  fetches(path: string): number {
    return this.#fetches.get(path) ?? 0;
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * A token for alice@acme from the issuer, valid for 5 minutes, signed with `key` (its kid in the
 * header unless another is given); `claims` override or (undefined) remove claims.
 */
async function sign(key: SigningKey, claims: Record<string, unknown> = {}, kid = key.kid): Promise<string> {
  const payload: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'alice',
    tenant: 'acme',
    iat: now(),
    exp: now() + 300,
    jti: crypto.randomUUID(),
    ...claims,
  };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid }).sign(key.privateKey);
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** The public agent card. */
// biome-ignore lint/suspicious/noExplicitAny: cards are inspected freely in tests
const cardOf = async (agent: Agent): Promise<any> =>
  (await fetch(`${agent.url}/.well-known/agent-card.json`)).json();

/** GetTask of nothing in particular: 200 (TaskNotFound) once in, 401 when the token is refused. */
const statusWith = async (agent: Agent, token: string): Promise<number> =>
  (await agent.as(bearer(token)).rpc('GetTask', { id: 'any' }, V1)).status;

const jwks = new Jwks();
let k1: SigningKey;
let k2: SigningKey;
/** Never published. */
let rogue: SigningKey;

const jwtEnv = (path: string, extra: Record<string, string> = {}) => ({
  JWT_JWKS_URL: `${jwks.url}${path}`,
  JWT_ISSUER: ISSUER,
  JWT_AUDIENCE: AUDIENCE,
  ...extra,
});

beforeAll(async () => {
  [k1, k2, rogue] = await Promise.all([newKey('key-1'), newKey('key-2'), newKey('key-1')]);
  await jwks.start();
  jwks.publish('/main', [k1]);
});
afterAll(async () => {
  await jwks.stop();
});

describe('JWT bearer tokens', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: jwtEnv('/main') });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('a valid token is let in as (tenant claim, sub): its tasks are that principal’s', async () => {
    const alice = agent.as(bearer(await sign(k1)));
    const { task } = await send(alice, skillMessage('export', { rows: 1 }));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const audit = await eventually(async () =>
      agent.logs.find((l) => l.audit === 'create' && l.taskId === task.id),
    );
    expect(audit).toMatchObject({ principal: 'alice', tenant: 'acme' });

    // Another token of the same principal: the same tasks, on every face.
    const again = agent.as(bearer(await sign(k1)));
    expect((await again.rpc('GetTask', { id: task.id }, V1)).body.result.id).toBe(task.id);
    expect((await again.rpc('tasks/get', { id: task.id })).body.result.id).toBe(task.id);
    const rest = await request(`${agent.url}/rest/tasks/${task.id}`, {
      headers: { 'A2A-Version': '1.0', ...again.credentials },
    });
    expect(rest.status).toBe(200);
    const listed = (await again.rpc('ListTasks', {}, V1)).body.result.tasks.map((t: { id: string }) => t.id);
    expect(listed).toEqual([task.id]);

    // The same subject in another tenant, and another subject in the same tenant, are someone else.
    for (const claims of [{ tenant: 'globex' }, { sub: 'bob' }]) {
      const other = agent.as(bearer(await sign(k1, claims)));
      expect((await other.rpc('GetTask', { id: task.id }, V1)).body.error.code, JSON.stringify(claims)).toBe(
        -32001,
      );
      expect((await other.rpc('ListTasks', {}, V1)).body.result.tasks ?? []).toEqual([]);
    }
  });

  const refused: [string, () => Promise<string>][] = [
    ['expired (2 minutes ago)', () => sign(k1, { iat: now() - 600, exp: now() - 120 })],
    ['not yet valid (nbf in 2 minutes)', () => sign(k1, { nbf: now() + 120 })],
    ['for another audience', () => sign(k1, { aud: 'someone-else' })],
    ['from another issuer', () => sign(k1, { iss: 'https://issuer.evil.example' })],
    ['without a tenant claim', () => sign(k1, { tenant: undefined })],
    ['without a subject', () => sign(k1, { sub: undefined })],
    ['signed by another key under the issuer’s kid', () => sign(rogue, {}, k1.kid)],
    ['signed by a key the issuer does not publish', () => sign(rogue, {}, 'unknown-key')],
    [
      'with a changed payload (another tenant)',
      async () => {
        const [header, , signature] = (await sign(k1)).split('.');
        const payload = Buffer.from(
          JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', tenant: 'globex', exp: now() + 300 }),
        ).toString('base64url');
        return `${header}.${payload}.${signature}`;
      },
    ],
    [
      'unsigned (alg none)',
      async () => {
        const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
        return `${part({ alg: 'none' })}.${part({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', tenant: 'acme', exp: now() + 300 })}.`;
      },
    ],
    ['not a JWT at all', async () => 'not-a-jwt'],
  ];

  it.each(refused)('a token %s is refused with 401 on every face', async (_, make) => {
    const token = await make();
    const who = agent.as(bearer(token));
    const replies = [
      await request(`${agent.url}/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...who.credentials },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
      }),
      await request(`${agent.url}/`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...who.credentials },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'any' } }),
      }),
      await request(`${agent.url}/rest/tasks`, { headers: { 'A2A-Version': '1.0', ...who.credentials } }),
      await request(`${agent.url}/rest/v1/tasks/any:subscribe`, { headers: who.credentials }),
    ];
    for (const r of replies) {
      expect(r.status, JSON.stringify(r.body)).toBe(401);
      const challenge = r.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer realm="taskhandle"/);
      expect(challenge).toContain('error="invalid_token"');
      expect(JSON.stringify(r.body)).not.toContain(token.split('.')[1] || token);
    }
  });

  it('tolerates 30 s of clock skew: just expired, or valid a few seconds from now, is let in', async () => {
    expect(await statusWith(agent, await sign(k1, { iat: now() - 300, exp: now() - 10 }))).toBe(200);
    expect(await statusWith(agent, await sign(k1, { nbf: now() + 10 }))).toBe(200);
  });

  it('an API key (header or th_ bearer) is refused when only JWTs are configured', async () => {
    const key = `th_${Buffer.alloc(32, 7).toString('base64url')}`;
    expect((await agent.as({ 'X-API-Key': key }).rpc('ListTasks', {}, V1)).status).toBe(401);
    expect((await agent.as(bearer(key)).rpc('ListTasks', {}, V1)).status).toBe(401);
  });

  it('the card says: a JWT as Authorization: Bearer (v1.0 and v0.3 shapes)', async () => {
    const card = await cardOf(agent);
    expect(Object.keys(card.securitySchemes)).toEqual(['bearer']);
    expect(card.securitySchemes.bearer).toMatchObject({
      httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' },
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    expect(card.security).toEqual([{ bearer: [] }]);
    expect(card.capabilities.extendedAgentCard).toBe(true);
  });
});

describe('JWT_PRINCIPAL_CLAIM and JWT_TENANT_CLAIM', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: jwtEnv('/main', { JWT_PRINCIPAL_CLAIM: 'email', JWT_TENANT_CLAIM: 'org' }) });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('name the claims the principal and tenant come from', async () => {
    const dana = agent.as(
      bearer(await sign(k1, { email: 'dana@initech.example', org: 'initech', tenant: undefined })),
    );
    const { task } = await send(dana, skillMessage('export', { rows: 1 }));
    const audit = await eventually(async () =>
      agent.logs.find((l) => l.audit === 'create' && l.taskId === task.id),
    );
    expect(audit).toMatchObject({ principal: 'dana@initech.example', tenant: 'initech' });
    // The default claims are not read any more: sub and tenant alone are refused.
    expect(await statusWith(agent, await sign(k1))).toBe(401);
  });
});

describe('API keys and JWTs together', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme' }, env: jwtEnv('/main') });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('either is let in, and the card offers both as alternatives', async () => {
    expect((await agent.rpc('ListTasks', {}, V1)).status).toBe(200);
    expect(await statusWith(agent, await sign(k1, { sub: 'bob' }))).toBe(200);
    expect(await statusWith(agent, `th_${Buffer.alloc(32, 1).toString('base64url')}`)).toBe(401);
    const card = await cardOf(agent);
    expect(Object.keys(card.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
    // Two requirements: either one satisfies the card (OR), not both together (AND).
    expect(card.securityRequirements).toEqual([
      { schemes: { apiKey: { list: [] } } },
      { schemes: { bearer: { list: [] } } },
    ]);
    expect(card.security).toEqual([{ apiKey: [] }, { bearer: [] }]);
  });
});

/**
 * The issuer rotates its keys. jose caches the JWKS and refetches it for a token with a kid it does
 * not know, but not within 30 s of the last fetch (its cooldown): the test waits that out once.
 */
describe('a rotated JWKS', () => {
  let keep: Agent;
  let drop: Agent;
  let fresh: Agent;
  let fetchedAt = 0;
  beforeAll(async () => {
    for (const path of ['/keep', '/drop', '/fresh']) jwks.publish(path, [k1]);
    [keep, drop, fresh] = await Promise.all([
      launch({ env: jwtEnv('/keep') }),
      launch({ env: jwtEnv('/drop') }),
      launch({ env: jwtEnv('/fresh') }),
    ]);
    // keep and drop fetch the set now, with the old key only.
    const old = await sign(k1);
    expect(await statusWith(keep, old)).toBe(200);
    expect(await statusWith(drop, old)).toBe(200);
    fetchedAt = Date.now();
    expect(jwks.fetches('/keep')).toBe(1);
    expect(jwks.fetches('/drop')).toBe(1);
    // The issuer rotates: a new key beside the old one, or instead of it.
    jwks.publish('/keep', [k1, k2]);
    jwks.publish('/drop', [k2]);
    jwks.publish('/fresh', [k2]);
  });
  afterAll(async () => {
    await Promise.all([keep?.stop(), drop?.stop(), fresh?.stop()]);
  });

  it('a server that has not fetched the set yet verifies with the rotated one', async () => {
    expect(jwks.fetches('/fresh')).toBe(0);
    expect(await statusWith(fresh, await sign(k2))).toBe(200);
    expect(await statusWith(fresh, await sign(k1))).toBe(401);
  });

  it('a token with the new kid makes the server fetch the set again; a dropped key is refused from then on', async () => {
    await new Promise((r) => setTimeout(r, Math.max(0, fetchedAt + 31_000 - Date.now())));
    const [newer, older] = [await sign(k2), await sign(k1)];
    expect(await statusWith(keep, newer)).toBe(200);
    expect(await statusWith(keep, older)).toBe(200);
    expect(jwks.fetches('/keep')).toBe(2);
    expect(await statusWith(drop, newer)).toBe(200);
    expect(await statusWith(drop, older)).toBe(401);
    expect(jwks.fetches('/drop')).toBe(2);
  }, 60_000);
});
