import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { type JwtOptions, JwtVerifier } from '../../src/auth/jwt-verifier.js';
import { tempDirs } from '../helpers.js';
import {
  AUDIENCE,
  ISSUER,
  jwks,
  jwksServer,
  nowS,
  type SigningKey,
  signingKey,
  tamper,
  token,
  unsignedToken,
} from './jwt-fixtures.js';

const dirs = tempDirs();

const options = (o: Partial<JwtOptions>): JwtOptions => ({
  issuer: ISSUER,
  audience: AUDIENCE,
  tenantClaim: 'tenant',
  principalClaim: 'sub',
  ...o,
});

let es: SigningKey;
let rs: SigningKey;
/** Not in any published key set. */
let stranger: SigningKey;
let jwksFile: string;

beforeAll(async () => {
  [es, rs, stranger] = await Promise.all([
    signingKey('ES256', 'k-es'),
    signingKey('RS256', 'k-rs'),
    signingKey('ES256', 'k-stranger'),
  ]);
  jwksFile = join(dirs.make(), 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify(jwks(es, rs)));
});

const ALICE = { id: 'alice', tenant: 'acme', via: 'jwt' } as const;

describe('JwtVerifier', () => {
  it('needs a JWKS URL or file', () => {
    expect(() => new JwtVerifier(options({}))).toThrow('a JWKS URL or file is required');
  });

  // Both key sources must accept and refuse the same tokens for the same reasons.
  describe('with a local JWKS file', () => {
    sharedCases(async () => ({ verifier: new JwtVerifier(options({ jwksFile })), close: async () => {} }));
  });
  describe('with a remote JWKS', () => {
    sharedCases(async () => {
      const server = await jwksServer(jwks(es, rs));
      return { verifier: new JwtVerifier(options({ jwksUrl: server.url })), close: server.close };
    });
  });

  it('reads the skills a principal may use from JWT_SKILLS_CLAIM, refusing a claim that is not a list', async () => {
    const verifier = new JwtVerifier(options({ jwksFile, skillsClaim: 'skills' }));
    expect(await verifier.verify(await token(es, { claims: { skills: ['sleep'] } }))).toEqual({
      ...ALICE,
      skills: new Set(['sleep']),
    });
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    expect(await verifier.verify(await token(es, { claims: { skills: 'sleep' } }))).toEqual({
      reason: "the token's skills claim is not a list of skill ids",
    });
  });

  it('picks up keys rotated into the local JWKS file without a restart', async () => {
    const file = join(dirs.make(), 'rotating.json');
    writeFileSync(file, JSON.stringify(jwks(es)));
    let now = 0;
    const verifier = new JwtVerifier(options({ jwksFile: file, clock: () => now }));
    expect(await verifier.verify(await token(rs))).toEqual({ reason: expect.any(String) });
    writeFileSync(file, JSON.stringify(jwks(es, rs)));
    now = 5_000;
    expect(await verifier.verify(await token(rs))).toEqual(ALICE);
  });

  it('reads the tenant and the principal from the configured claims', async () => {
    const verifier = new JwtVerifier(options({ jwksFile, tenantClaim: 'org_id', principalClaim: 'email' }));
    const jwt = await token(es, { claims: { email: 'alice@acme.example', org_id: 'acme-eu' } });
    expect(await verifier.verify(jwt)).toEqual({ id: 'alice@acme.example', tenant: 'acme-eu', via: 'jwt' });

    // sub and tenant are then just claims: without the configured ones the token is refused.
    expect(await verifier.verify(await token(es, { claims: { org_id: 'acme-eu' } }))).toEqual({
      reason: 'the token has no email claim',
    });
    expect(await verifier.verify(await token(es, { claims: { email: 'alice@acme.example' } }))).toEqual({
      reason: 'the token has no org_id claim',
    });
  });
});

/**
 * jose's remote key set (createRemoteJWKSet, defaults): fetched on first use, kept 10 min; a token
 * whose kid the cached set lacks refetches it, but at most once per 30 s cooldown after a fetch.
 * Date is faked to step over those windows; tokens are signed after each step.
 */
describe('JwtVerifier with a remote JWKS that rotates', () => {
  let server: Awaited<ReturnType<typeof jwksServer>>;
  let verifier: JwtVerifier;
  let next: SigningKey;

  beforeAll(async () => {
    next = await signingKey('ES256', 'k-next');
  });
  afterEach(async () => {
    vi.useRealTimers();
    await server.close();
  });

  const start = async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    server = await jwksServer(jwks(es));
    verifier = new JwtVerifier(options({ jwksUrl: server.url }));
  };
  const advance = (ms: number) => vi.setSystemTime(Date.now() + ms);

  it('fetches the key set once and verifies later tokens from the cache', async () => {
    await start();
    expect(server.requests).toBe(0); // nothing fetched before the first token
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    advance(5 * 60_000);
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    expect(server.requests).toBe(1);
  });

  it('refetches for a kid it does not know once the cooldown has passed, and accepts the new key', async () => {
    await start();
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    server.publish(jwks(es, next));

    advance(31_000);
    expect(await verifier.verify(await token(next))).toEqual(ALICE);
    expect(server.requests).toBe(2);
    // The old key is still published: its tokens keep verifying, without another fetch.
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    expect(server.requests).toBe(2);
  });

  it('does not refetch within 30 s of the last fetch: a key used that early is refused until then', async () => {
    await start();
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    server.publish(jwks(es, next));

    advance(10_000);
    expect(await verifier.verify(await token(next))).toEqual({
      reason: 'the token was not signed by a key of the issuer',
    });
    expect(server.requests).toBe(1);
    advance(21_000);
    expect(await verifier.verify(await token(next))).toEqual(ALICE);
    expect(server.requests).toBe(2);
  });

  it('fetches at most once per cooldown however many unknown kids arrive', async () => {
    await start();
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    advance(31_000);
    for (const kid of ['x1', 'x2', 'x3', 'x4', 'x5']) {
      expect(await verifier.verify(await token(stranger, { kid }))).toEqual({
        reason: 'the token was not signed by a key of the issuer',
      });
    }
    expect(server.requests).toBe(2);
  });

  it('stops accepting a withdrawn key once the cached set is 10 min old', async () => {
    await start();
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    server.publish(jwks(next));

    advance(60_000); // a known kid never triggers a refetch: the withdrawn key still works
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    expect(server.requests).toBe(1);

    advance(10 * 60_000);
    expect(await verifier.verify(await token(es))).toEqual({
      reason: 'the token was not signed by a key of the issuer',
    });
    expect(await verifier.verify(await token(next))).toEqual(ALICE);
    expect(server.requests).toBe(2);
  });

  it('refuses tokens, without throwing, while the key set cannot be fetched', async () => {
    await start();
    server.respondWith(503);
    expect(await verifier.verify(await token(es))).toEqual({ reason: 'the token cannot be verified' });
    server.respondWith(200);
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
  });
});

/** The cases every key source must pass; `open` makes a verifier on it. */
function sharedCases(open: () => Promise<{ verifier: JwtVerifier; close: () => Promise<void> }>): void {
  let verifier: JwtVerifier;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ verifier, close } = await open());
  });
  afterAll(() => close());

  it('accepts a valid ES256 or RS256 token as the principal {sub, tenant}', async () => {
    expect(await verifier.verify(await token(es))).toEqual(ALICE);
    expect(await verifier.verify(await token(rs))).toEqual(ALICE);
    const bob = await token(rs, { claims: { sub: 'bob', tenant: 'globex' } });
    expect(await verifier.verify(bob)).toEqual({ id: 'bob', tenant: 'globex', via: 'jwt' });
  });

  it('accepts a token whose aud is a list including ours', async () => {
    const jwt = await new SignJWT({ sub: 'alice', tenant: 'acme' })
      .setProtectedHeader({ alg: 'ES256', kid: es.kid })
      .setIssuer(ISSUER)
      .setAudience(['https://other.example', AUDIENCE])
      .setExpirationTime('5m')
      .sign(es.privateKey);
    expect(await verifier.verify(jwt)).toEqual(ALICE);
  });

  it('refuses an expired token', async () => {
    expect(await verifier.verify(await token(es, { exp: nowS() - 120 }))).toEqual({
      reason: 'the token has expired',
    });
  });

  it('refuses a token without an expiry: it would be a credential for ever', async () => {
    const jwt = await new SignJWT({ sub: 'alice', tenant: 'acme' })
      .setProtectedHeader({ alg: es.alg, kid: es.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .sign(es.privateKey);
    expect(await verifier.verify(jwt)).toEqual({ reason: expect.stringMatching(/\bexp\b/) });
  });

  it('refuses a token not valid before a time beyond the clock tolerance', async () => {
    const result = await verifier.verify(await token(es, { nbf: nowS() + 120 }));
    expect(result).toEqual({ reason: expect.stringMatching(/\bnbf\b/) });
  });

  it('tolerates 30 s of clock skew on exp and nbf', async () => {
    expect(await verifier.verify(await token(es, { exp: nowS() - 10 }))).toEqual(ALICE);
    expect(await verifier.verify(await token(es, { nbf: nowS() + 10 }))).toEqual(ALICE);
  });

  it('refuses another issuer or another audience, naming the claim', async () => {
    const iss = await verifier.verify(await token(es, { iss: 'https://evil.example' }));
    expect(iss).toEqual({ reason: "the token's iss claim is not accepted" });
    const aud = await verifier.verify(await token(es, { aud: 'https://other-agent.example' }));
    expect(aud).toEqual({ reason: "the token's aud claim is not accepted" });
  });

  it('refuses a token signed by a key that is not in the key set', async () => {
    expect(await verifier.verify(await token(stranger))).toEqual({
      reason: 'the token was not signed by a key of the issuer',
    });
    // A known kid does not help a foreign key: the signature is checked with the published key.
    expect(await verifier.verify(await token(stranger, { kid: es.kid }))).toEqual({
      reason: 'the token signature does not verify',
    });
  });

  it('refuses a token whose payload was changed after signing', async () => {
    const jwt = tamper(await token(es), { tenant: 'globex' });
    expect(await verifier.verify(jwt)).toEqual({ reason: 'the token signature does not verify' });
  });

  it('refuses a token without a subject or a tenant, naming the claim', async () => {
    const noSub = await token(es, { claims: { sub: undefined } });
    expect(await verifier.verify(noSub)).toEqual({ reason: 'the token has no sub claim' });
    const noTenant = await token(es, { claims: { tenant: undefined } });
    expect(await verifier.verify(noTenant)).toEqual({ reason: 'the token has no tenant claim' });
    const emptyTenant = await token(es, { claims: { tenant: '' } });
    expect(await verifier.verify(emptyTenant)).toEqual({ reason: 'the token has no tenant claim' });
    const numericTenant = await token(es, { claims: { tenant: 42 } });
    expect(await verifier.verify(numericTenant)).toEqual({ reason: 'the token has no tenant claim' });
  });

  it('refuses an unsigned (alg: none) token', async () => {
    expect(await verifier.verify(unsignedToken())).toEqual({ reason: 'the token cannot be verified' });
  });

  it('refuses an HS256 token made with the public key as its secret (algorithm confusion)', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(es.jwk));
    const jwt = await new SignJWT({ sub: 'alice', tenant: 'acme' })
      .setProtectedHeader({ alg: 'HS256', kid: es.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('5m')
      .sign(secret);
    expect(await verifier.verify(jwt)).toEqual({ reason: 'the token cannot be verified' });
  });

  it('refuses what is not a JWT at all', async () => {
    for (const garbage of ['', 'not-a-jwt', 'a.b.c', `th_${'A'.repeat(43)}`]) {
      expect(await verifier.verify(garbage)).toEqual({ reason: 'the token cannot be verified' });
    }
  });
}
