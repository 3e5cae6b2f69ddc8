import { writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ApiKeys, addApiKey, newApiKey } from '../../src/auth/api-keys.js';
import { Authenticator, type AuthResult } from '../../src/auth/authenticator.js';
import { JwtVerifier } from '../../src/auth/jwt-verifier.js';
import { ANONYMOUS } from '../../src/auth/principal.js';
import { tempDirs } from '../helpers.js';
import { AUDIENCE, ISSUER, jwks, nowS, type SigningKey, signingKey, token } from './jwt-fixtures.js';

const dirs = tempDirs();
afterEach(() => vi.restoreAllMocks());

const CHALLENGE = 'Bearer realm="taskhandle"';
const invalidToken = (description: string) =>
  `${CHALLENGE}, error="invalid_token", error_description="${description}"`;
/** RFC 6750 / RFC 9110: auth-params are token=quoted-string, with no bare quote inside a value. */
const WELL_FORMED = /^Bearer realm="taskhandle"(, [a-z_]+="[^"\\]*")*$/;

let aliceKey: string;
let bobKey: string;
let keys: ApiKeys;
let jwt: JwtVerifier;
let es: SigningKey;

beforeAll(async () => {
  const dir = dirs.make();
  const keysFile = join(dir, 'api-keys.json');
  aliceKey = addApiKey(keysFile, 'alice', 'acme');
  bobKey = addApiKey(keysFile, 'bob', 'globex');
  keys = new ApiKeys(keysFile);

  es = await signingKey('ES256', 'k1');
  const jwksFile = join(dir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify(jwks(es)));
  jwt = new JwtVerifier({
    jwksFile,
    issuer: ISSUER,
    audience: AUDIENCE,
    tenantClaim: 'tenant',
    principalClaim: 'sub',
  });
});

const bearer = (credentials: string): IncomingHttpHeaders => ({ authorization: `Bearer ${credentials}` });
const refused = (r: AuthResult) => {
  if (r.ok) throw new Error(`expected a refusal, got ${JSON.stringify(r.principal)}`);
  expect(r.challenge).toMatch(WELL_FORMED);
  return r;
};

describe('Authenticator with nothing configured', () => {
  it('lets everyone in as the anonymous principal, whatever they send', async () => {
    const auth = new Authenticator({});
    expect(auth.anonymous).toBe(true);
    for (const headers of [
      {},
      bearer('whatever'),
      { 'x-api-key': 'th_nope' },
      { authorization: 'Basic eDp5' },
    ]) {
      expect(await auth.authenticate(headers)).toEqual({ ok: true, principal: ANONYMOUS });
    }
  });
});

describe('Authenticator with API keys', () => {
  const auth = () => new Authenticator({ apiKeys: keys });
  const ALICE = { ok: true, principal: { id: 'alice', tenant: 'acme', via: 'api-key' } };

  it('accepts a key in X-API-Key or as a Bearer token (the scheme in any case)', async () => {
    expect(auth().anonymous).toBe(false);
    expect(await auth().authenticate({ 'x-api-key': aliceKey })).toEqual(ALICE);
    expect(await auth().authenticate(bearer(aliceKey))).toEqual(ALICE);
    expect(await auth().authenticate({ authorization: `bearer ${aliceKey}` })).toEqual(ALICE);
    expect(await auth().authenticate(bearer(bobKey))).toEqual({
      ok: true,
      principal: { id: 'bob', tenant: 'globex', via: 'api-key' },
    });
  });

  it('refuses a request without credentials with a bare challenge (no error: none were sent)', async () => {
    for (const headers of [{}, { authorization: '' }]) {
      const r = refused(await auth().authenticate(headers));
      expect(r.challenge).toBe(CHALLENGE);
      expect(r.message).toMatch(/^Unauthenticated: no credentials; send an API key \(X-API-Key/);
      expect(r.kind).toBe('no-credentials');
    }
  });

  it('refuses an unknown key with error="invalid_token", in either header', async () => {
    const unknown = newApiKey();
    for (const headers of [{ 'x-api-key': unknown }, bearer(unknown), bearer('eyJhbGciOi.not.a-key')]) {
      const r = refused(await auth().authenticate(headers));
      expect(r).toEqual({
        ok: false,
        challenge: invalidToken('unknown API key'),
        message: 'Unauthenticated: unknown API key',
        kind: 'unknown-key',
      });
    }
  });

  it('refuses Basic credentials, saying that the header is not a Bearer token', async () => {
    const r = refused(await auth().authenticate({ authorization: 'Basic YWxpY2U6c2VjcmV0' }));
    expect(r.challenge).toBe(CHALLENGE);
    expect(r.message).toMatch(/the Authorization header is not a Bearer token/);
    expect(r.kind).toBe('not-bearer');
  });

  it('never echoes the credentials it was sent', async () => {
    const unknown = newApiKey();
    for (const headers of [
      { 'x-api-key': unknown },
      bearer(unknown),
      { authorization: `Basic ${unknown}` },
    ]) {
      const r = refused(await auth().authenticate(headers));
      expect(`${r.challenge} ${r.message}`).not.toContain(unknown);
    }
  });
});

describe('Authenticator with API keys and JWT', () => {
  const auth = () => new Authenticator({ apiKeys: keys, jwt });

  it('sends th_ bearer tokens to the keys and every other bearer token to the JWT verifier', async () => {
    const verify = vi.spyOn(jwt, 'verify');
    const viaKey = await auth().authenticate(bearer(aliceKey));
    expect(viaKey).toEqual({ ok: true, principal: { id: 'alice', tenant: 'acme', via: 'api-key' } });
    expect(verify).not.toHaveBeenCalled();

    const viaJwt = await auth().authenticate(bearer(await token(es, { claims: { sub: 'carol' } })));
    expect(viaJwt).toEqual({ ok: true, principal: { id: 'carol', tenant: 'acme', via: 'jwt' } });
    expect(verify).toHaveBeenCalledTimes(1);
  });

  it('refuses an unknown th_ key as a key, without trying it as a JWT', async () => {
    const verify = vi.spyOn(jwt, 'verify');
    const r = refused(await auth().authenticate(bearer(newApiKey())));
    expect(r.challenge).toBe(invalidToken('unknown API key'));
    expect(verify).not.toHaveBeenCalled();
  });

  it('refuses a bad JWT with error="invalid_token" and the verifier\'s reason', async () => {
    const expired = refused(await auth().authenticate(bearer(await token(es, { exp: nowS() - 120 }))));
    expect(expired.challenge).toBe(invalidToken('the token has expired'));
    expect(expired.message).toBe('Unauthenticated: the token has expired');
    expect(expired.kind).toBe('invalid-token');

    // The reason's apostrophe stays inside the quoted string; no bare quote ever gets in.
    const wrongAud = refused(
      await auth().authenticate(bearer(await token(es, { aud: 'https://x.example' }))),
    );
    expect(wrongAud.challenge).toBe(invalidToken("the token's aud claim is not accepted"));
  });

  it('names both ways in when nothing was sent', async () => {
    const r = refused(await auth().authenticate({}));
    expect(r.message).toBe(
      'Unauthenticated: no credentials; send an API key (X-API-Key or Authorization: Bearer) ' +
        'or a JWT (Authorization: Bearer)',
    );
  });
});

describe('Authenticator with JWT only', () => {
  const auth = () => new Authenticator({ jwt });

  it('accepts a valid JWT', async () => {
    expect(await auth().authenticate(bearer(await token(es)))).toEqual({
      ok: true,
      principal: { id: 'alice', tenant: 'acme', via: 'jwt' },
    });
  });

  it('verifies a th_ bearer token as a JWT, which fails', async () => {
    const verify = vi.spyOn(jwt, 'verify');
    const r = refused(await auth().authenticate(bearer(aliceKey)));
    expect(verify).toHaveBeenCalledWith(aliceKey);
    expect(r.challenge).toBe(invalidToken('the token cannot be verified'));
  });

  it('refuses an X-API-Key (no keys are configured)', async () => {
    const r = refused(await auth().authenticate({ 'x-api-key': aliceKey }));
    expect(r.challenge).toMatch(/error="invalid_token"/);
  });

  it('asks for a JWT when nothing was sent', async () => {
    const r = refused(await auth().authenticate({}));
    expect(r.challenge).toBe(CHALLENGE);
    expect(r.message).toBe('Unauthenticated: no credentials; send a JWT (Authorization: Bearer)');
  });
});
