import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';
import canonicalize from 'canonicalize';
import {
  base64url,
  type CryptoKey,
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  flattenedVerify,
  importJWK,
  type JSONWebKeySet,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './cli-run.js';
import { grpcClient } from './grpc.js';
import { type Agent, launch, runCli } from './harness.js';

// biome-ignore lint/suspicious/noExplicitAny: cards are inspected freely in tests
type Card = Record<string, any>;

const V1 = { 'A2A-Version': '1.0' };
const JWKS_PATH = '/.well-known/agent-card-jwks.json';

/**
 * What a peer does, in the few lines docs/SECURITY.md shows: the JCS form of the card without
 * `signatures` is the detached payload; each signature's key is found through its jku and kid.
 * Returns the kids that verified; throws at the first signature that does not.
 */
async function peerVerifies(card: Card, keys?: JSONWebKeySet): Promise<string[]> {
  const { signatures, ...unsigned } = card;
  const payload = base64url.encode(canonicalize(unsigned) ?? '');
  const kids: string[] = [];
  for (const s of signatures ?? []) {
    const { jku } = decodeProtectedHeader(s);
    const set = keys ? createLocalJWKSet(keys) : createRemoteJWKSet(new URL(String(jku)));
    const { protectedHeader } = await flattenedVerify({ payload, ...s }, set, {
      algorithms: ['ES256', 'EdDSA'],
    });
    kids.push(String(protectedHeader?.kid));
  }
  return kids;
}

const getCard = async (agent: Agent, path: string, headers: Record<string, string> = {}) =>
  (await (await fetch(`${agent.url}${path}`, { headers })).json()) as Card;
const jwksOf = async (agent: Agent) =>
  (await (await fetch(`${agent.url}${JWKS_PATH}`)).json()) as JSONWebKeySet;

/** Each card a client can fetch, by name: the well-known cards per version and path, the extended card per face. */
async function everyVariant(agent: Agent): Promise<[string, Card][]> {
  const authed = agent.credentials;
  const variants: [string, Card][] = [];
  for (const path of ['/.well-known/agent-card.json', '/.well-known/agent.json']) {
    variants.push([`${path} v1.0`, await getCard(agent, path, V1)]);
    variants.push([`${path} v0.3`, await getCard(agent, path)]);
  }
  variants.push([
    'GetExtendedAgentCard (JSON-RPC v1.0)',
    (await agent.rpc('GetExtendedAgentCard', {}, { version: '1.0' })).body.result,
  ]);
  variants.push([
    'agent/getAuthenticatedExtendedCard (JSON-RPC v0.3)',
    (await agent.rpc('agent/getAuthenticatedExtendedCard', {})).body.result,
  ]);
  variants.push([
    'GET /rest/extendedAgentCard (REST v1.0)',
    await getCard(agent, '/rest/extendedAgentCard', { ...V1, ...authed }),
  ]);
  return variants;
}

describe('the signed agent card (generated ES256 key)', () => {
  let agent: Agent;
  let keysDir: string;
  beforeAll(async () => {
    keysDir = mkdtempSync(join(tmpdir(), 'th-card-keys-'));
    agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { KEYS_DIR: keysDir, EXTENDED_SKILLS: 'sleep' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('every variant of the card verifies with jose against the served JWKS, each signature naming alg, typ, kid and jku', async () => {
    const jwks = await jwksOf(agent);
    expect(jwks.keys).toHaveLength(1);
    const [key] = jwks.keys;
    expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(key).not.toHaveProperty('d');
    for (const [name, card] of await everyVariant(agent)) {
      expect(card.signatures, name).toHaveLength(1);
      expect(decodeProtectedHeader(card.signatures[0]), name).toEqual({
        alg: 'ES256',
        typ: 'JOSE',
        kid: key?.kid,
        jku: `${agent.url}${JWKS_PATH}`,
      });
      expect(await peerVerifies(card), name).toEqual([key?.kid]);
    }
  });

  it('the v0.3 REST extended card, which the SDK re-encodes after we answer, goes unsigned rather than with signatures that fail', async () => {
    const card = await getCard(agent, '/rest/v1/card', agent.credentials);
    expect(card.skills.map((s: Card) => s.id)).toContain('sleep');
    expect(card.signatures ?? []).toEqual([]);
  });

  it('the card JWKS is not the webhook JWKS: card keys sign nothing else', async () => {
    const webhook = (await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    const card = await jwksOf(agent);
    const kids = new Set(webhook.keys.map((k) => k.kid));
    expect(card.keys.some((k) => kids.has(k.kid))).toBe(false);
  });

  it('changing any field of a fetched card breaks its signature', async () => {
    for (const [name, card] of await everyVariant(agent)) {
      const changes = Object.keys(card)
        .filter((k) => k !== 'signatures')
        .map((k) => ({ ...card, [k]: changed(card[k]) }));
      changes.push({ ...card, addedField: true });
      changes.push({
        ...card,
        skills: [{ ...card.skills[0], description: 'something else' }, ...card.skills.slice(1)],
      });
      for (const tampered of changes)
        await expect(
          peerVerifies(tampered),
          `${name}: ${JSON.stringify(tampered).slice(0, 80)}`,
        ).rejects.toThrow(/signature verification failed/);
    }
  });

  it('the signature is stable: the same body and ETag at every request, and 304 to its ETag', async () => {
    for (const headers of [V1, {}]) {
      const first = await fetch(`${agent.url}/.well-known/agent-card.json`, { headers });
      const second = await fetch(`${agent.url}/.well-known/agent-card.json`, { headers });
      const etag = first.headers.get('etag') ?? '';
      expect(second.headers.get('etag')).toBe(etag);
      expect(await second.text()).toBe(await first.text());
      const again = await fetch(`${agent.url}/.well-known/agent-card.json`, {
        headers: { ...headers, 'If-None-Match': etag },
      });
      expect(again.status).toBe(304);
    }
  });

  it("the a2a-js SDK's verifier accepts the v1.0 card of an agent without credentials", async () => {
    const open = await launch();
    try {
      const card = await getCard(open, '/.well-known/agent-card.json', V1);
      const keys = await jwksOf(open);
      await verifyAgentCardSignature(
        async (kid) => (await importJWK(keys.keys.find((k) => k.kid === kid) ?? {})) as CryptoKey,
      )(card as never);
    } finally {
      await open.stop();
    }
  });

  it('a rotated key: cards signed before still verify while both keys are published, new cards carry both signatures', async () => {
    const before = await getCard(agent, '/.well-known/agent-card.json', V1);
    const [oldKid] = await peerVerifies(before);
    const rotated = await runCli(['keys', 'rotate', '--card'], {
      KEYS_DIR: keysDir,
      DATABASE_URL: `sqlite:${agent.dbPath}`,
    });
    expect(rotated.code).toBe(0);
    const newKid = JSON.parse(rotated.stdout).kid as string;
    // The running server picks the new key up at its next reload: no restart.
    const after = await until(async () => {
      const card = await getCard(agent, '/.well-known/agent-card.json', V1);
      return card.signatures.length === 2 ? card : undefined;
    });
    expect((await jwksOf(agent)).keys.map((k) => k.kid).sort()).toEqual([oldKid, newKid].sort());
    expect(await peerVerifies(before)).toEqual([oldKid]);
    expect(await peerVerifies(after)).toEqual([newKid, oldKid]);
    for (const [name, card] of await everyVariant(agent))
      expect((await peerVerifies(card)).sort(), name).toEqual([oldKid, newKid].sort());
  });
});

describe('the extended card over gRPC', () => {
  it('is signed over the fields the v1.0 transports send: its proto-JSON verifies with jose', async () => {
    const agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { GRPC_PORT: '0', EXTENDED_SKILLS: 'sleep' },
    });
    try {
      const client = await grpcClient(agent);
      // The SDK client asks for the extended card (the public card says there is one) over gRPC.
      const card = AgentCard.toJSON(await client.getAgentCard()) as Card;
      expect(card.skills.map((s: Card) => s.id)).toContain('sleep');
      expect(await peerVerifies(card)).toEqual([(await jwksOf(agent)).keys[0]?.kid]);
    } finally {
      await agent.stop();
    }
  });
});

describe("the operator's own key (CARD_SIGNING_KEY_FILE)", () => {
  it('a PEM key signs every variant; a JWK Set of two signs with both; a replaced file is used without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'th-card-own-'));
    const file = join(dir, 'card-key.pem');
    const ed = generateKeyPairSync('ed25519');
    writeFileSync(file, ed.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const agent = await launch({ apiKeys: { alice: 'acme' }, env: { CARD_SIGNING_KEY_FILE: file } });
    try {
      const jwks = await jwksOf(agent);
      expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' })]);
      expect(jwks.keys[0]).not.toHaveProperty('d');
      for (const [name, card] of await everyVariant(agent)) {
        expect(decodeProtectedHeader(card.signatures[0]).alg, name).toBe('EdDSA');
        expect(await peerVerifies(card), name).toEqual([jwks.keys[0]?.kid]);
      }
      // The operator's rollover: the new key beside the old one, as a JWK Set (each with its own kid).
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const set = {
        keys: [
          { ...ec.privateKey.export({ format: 'jwk' }), kid: 'ops-2026-12' },
          { ...ed.privateKey.export({ format: 'jwk' }), kid: 'ops-2026-06' },
        ],
      };
      writeFileSync(join(dir, 'card-key.jwks'), JSON.stringify(set));
      const { renameSync } = await import('node:fs');
      renameSync(join(dir, 'card-key.jwks'), file);
      const card = await until(async () => {
        const c = await getCard(agent, '/.well-known/agent-card.json', V1);
        return c.signatures.length === 2 ? c : undefined;
      });
      expect((await jwksOf(agent)).keys.map((k) => k.kid)).toEqual(['ops-2026-12', 'ops-2026-06']);
      expect(await peerVerifies(card)).toEqual(['ops-2026-12', 'ops-2026-06']);
    } finally {
      await agent.stop();
    }
  });

  it('a file that holds no private key stops the start, naming the setting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'th-card-bad-'));
    const file = join(dir, 'public.json');
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(file, JSON.stringify(publicKey.export({ format: 'jwk' })));
    const run = await runCli(['serve'], { CARD_SIGNING_KEY_FILE: file, PORT: '0' });
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/CARD_SIGNING_KEY_FILE=.*private key/);
  });
});

describe('CARD_SIGNING=false', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme' }, env: { CARD_SIGNING: 'false' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it("no variant carries signatures, there is no card JWKS, and the ETag is the body's own", async () => {
    for (const [name, card] of await everyVariant(agent)) expect(card.signatures ?? [], name).toEqual([]);
    expect((await fetch(`${agent.url}${JWKS_PATH}`)).status).toBe(404);
    const res = await fetch(`${agent.url}/.well-known/agent-card.json`, { headers: V1 });
    expect(res.headers.get('etag')).toMatch(/^"/);
    const etag = res.headers.get('etag') ?? '';
    const again = await fetch(`${agent.url}/.well-known/agent-card.json`, {
      headers: { ...V1, 'If-None-Match': etag },
    });
    expect(again.status).toBe(304);
  });

  it('taskhandle card verify says the card has no signatures, exit 9', async () => {
    const run = await cli(agent.url, ['card', 'verify', agent.url]);
    expect(run.code).toBe(9);
    expect(run.stdout).toMatch(/has no signatures/);
  });
});

describe('taskhandle card verify', () => {
  let agent: Agent;
  let forger: Server;
  let forgerUrl: string;
  /** What the forger serves as its card (a card of the agent's, changed or not). */
  let served: Card = {};
  beforeAll(async () => {
    agent = await launch();
    forger = createServer((req, res) => {
      const body = req.url === JWKS_PATH ? JSON.stringify({ keys: [] }) : JSON.stringify(served);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
    });
    await new Promise<void>((r) => forger.listen(0, '127.0.0.1', r));
    forgerUrl = `http://127.0.0.1:${(forger.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    forger?.close();
    await agent?.stop();
  });

  it("verifies each version's card and prints the key that verified it", async () => {
    const kid = (await jwksOf(agent)).keys[0]?.kid;
    for (const args of [[agent.url], [`${agent.url}/.well-known/agent.json`, '--a2a-version', '0.3']]) {
      const run = await cli(agent.url, ['card', 'verify', ...args]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(
        `signature 1: verified by key ${kid} (ES256) from ${agent.url}${JWKS_PATH}`,
      );
      expect(run.stdout).toMatch(/: verified \(1 of 1 signatures\)/);
    }
    const json = await cli(agent.url, ['card', 'verify', agent.url, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      verified: true,
      checks: [{ ok: true, kid, alg: 'ES256' }],
    });
  });

  it('a changed card fails (exit 9), saying the signature does not match', async () => {
    served = { ...(await getCard(agent, '/.well-known/agent-card.json', V1)), description: 'a changed card' };
    const run = await cli(agent.url, ['card', 'verify', forgerUrl, '--jwks', `${agent.url}${JWKS_PATH}`]);
    expect(run.code).toBe(9);
    expect(run.stdout).toMatch(/signature 1: not verified \(key .+\): the signature does not match the card/);
    expect(run.stdout).toMatch(/NOT verified/);
  });

  it("a jku off the card's origin is not followed (exit 9), and says how to trust a key set", async () => {
    served = await getCard(agent, '/.well-known/agent-card.json', V1);
    const run = await cli(agent.url, ['card', 'verify', forgerUrl]);
    expect(run.code).toBe(9);
    expect(run.stdout).toMatch(/is not on the card's origin .*give --jwks URL/);
  });

  it('a key that is not in the key set fails, naming the kid', async () => {
    served = await getCard(agent, '/.well-known/agent-card.json', V1);
    const run = await cli(agent.url, ['card', 'verify', forgerUrl, '--jwks', `${forgerUrl}${JWKS_PATH}`]);
    expect(run.code).toBe(9);
    expect(run.stdout).toMatch(/key .+ \(ES256\) is not in the key set/);
  });

  it('usage and connection errors have their own exit codes', async () => {
    expect((await cli(agent.url, ['card', 'verify'])).code).toBe(2);
    expect((await cli(agent.url, ['card', 'check', agent.url])).code).toBe(2);
    expect((await cli(agent.url, ['card', 'verify', 'not a url'])).code).toBe(2);
    expect((await cli(agent.url, ['card', 'verify', 'http://127.0.0.1:1/'])).code).toBe(5);
  });
});

/** Another value of the same kind: what a tampering proxy might make of a field. */
function changed(value: unknown): unknown {
  if (typeof value === 'string') return `${value}!`;
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') return value + 1;
  if (Array.isArray(value)) return value.length > 1 ? value.slice(1) : [...value, value[0] ?? 'x'];
  if (value && typeof value === 'object') return { ...value, added: 1 };
  return 'x';
}

/** Polls `probe` (every 200 ms, up to 30 s) until it gives a value: the server's key reload is periodic. */
async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('the card was not signed again within 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}
