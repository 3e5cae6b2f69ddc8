import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  bodySha256,
  type NotificationJwtPayload,
  rotateSigningKey,
  SigningKeys,
  type SigningKeysOptions,
} from '../../src/push/signing-keys.js';
import { tempDirs } from '../helpers.js';

const dirs = tempDirs();

const T0 = 1_700_000_000_000;
const LIFETIME = 300_000;
const GRACE = 60_000;
const issuer = 'https://agent.example';
const aud = 'https://receiver.example/hook';
const body = '{"taskId":"t1","status":{"state":"completed"},"note":"ünïcödé"}';
const opts: SigningKeysOptions = {
  issuer,
  maxTokenLifetimeMs: LIFETIME,
  pruneGraceMs: GRACE,
  clock: () => T0,
};

const keyFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.json'));

/** Verifies as a receiver would, at `at` instead of the wall clock. */
const verify = (keys: SigningKeys, token: string, at: number, audience = aud) =>
  jwtVerify<NotificationJwtPayload>(token, createLocalJWKSet(keys.jwks(at)), {
    issuer,
    audience,
    currentDate: new Date(at),
  });

const sign = (keys: SigningKeys, now = T0) =>
  keys.sign({ aud, taskId: 't1', notificationId: 'n1', body }, now);

describe('SigningKeys', () => {
  it('generates exactly one key, mode 0600 in a 0700 directory, and reloads it on reopen', async () => {
    const dir = join(dirs.make(), 'keys');
    const keys = await SigningKeys.open(dir, opts);
    expect(keyFiles(dir)).toEqual([`${keys.activeKid}.json`]);
    expect(statSync(join(dir, `${keys.activeKid}.json`)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir)).toHaveLength(1); // no temp file left behind

    const again = await SigningKeys.open(dir, opts);
    expect(again.activeKid).toBe(keys.activeKid);
    expect(keyFiles(dir)).toHaveLength(1);
  });

  it('publishes public keys only, and a signed token verifies with every claim', async () => {
    const keys = await SigningKeys.open(dirs.make(), opts);
    const jwks = keys.jwks();
    expect(jwks.keys).toEqual([
      {
        kty: 'EC',
        crv: 'P-256',
        x: expect.any(String),
        y: expect.any(String),
        kid: keys.activeKid,
        alg: 'ES256',
        use: 'sig',
      },
    ]);
    expect(JSON.stringify(jwks)).not.toContain('"d"');

    const token = await sign(keys);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: keys.activeKid, typ: 'JWT' });
    const { payload } = await verify(keys, token, T0 + 1000);
    const sha = createHash('sha256').update(Buffer.from(body, 'utf8')).digest('hex');
    expect(payload).toEqual({
      iss: issuer,
      aud,
      iat: T0 / 1000,
      exp: (T0 + LIFETIME) / 1000,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      taskId: 't1',
      notificationId: 'n1',
      request_body_sha256: sha,
    });
    expect(bodySha256(body)).toBe(sha);
    // One jti per delivery attempt.
    const second = await verify(keys, await sign(keys), T0 + 1000);
    expect(second.payload.jti).not.toBe(payload.jti);
  });

  it('rejects a wrong audience, a tampered body hash, and an expired token', async () => {
    const keys = await SigningKeys.open(dirs.make(), opts);
    const token = await sign(keys);
    await expect(verify(keys, token, T0, 'https://attacker.example/hook')).rejects.toBeInstanceOf(
      errors.JWTClaimValidationFailed,
    );

    const [header, claims, signature] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(claims, 'base64url').toString());
    payload.request_body_sha256 = bodySha256('{"taskId":"t1","status":{"state":"failed"}}');
    const tampered = `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;
    await expect(verify(keys, tampered, T0)).rejects.toBeInstanceOf(errors.JWSSignatureVerificationFailed);

    await expect(verify(keys, token, T0 + LIFETIME)).rejects.toBeInstanceOf(errors.JWTExpired);
  });

  it('keeps a retired key published until its last token expired plus grace, then prune removes it', async () => {
    const dir = dirs.make();
    const keys = await SigningKeys.open(dir, opts);
    const oldKid = keys.activeKid;
    const retiredAt = T0 + 10_000;
    const token = await sign(keys, retiredAt); // signed at the last moment the old key was active
    const newKid = await keys.rotate(retiredAt);
    expect(newKid).not.toBe(oldKid);
    expect(keys.activeKid).toBe(newKid);
    expect(decodeProtectedHeader(await sign(keys, retiredAt)).kid).toBe(newKid);

    const stored = JSON.parse(readFileSync(join(dir, `${oldKid}.json`), 'utf8'));
    expect(stored.retiredAt).toBe(retiredAt);
    expect((await verify(keys, token, retiredAt + LIFETIME - 1)).payload.taskId).toBe('t1');

    const end = retiredAt + LIFETIME + GRACE;
    expect(await keys.prune(end - 1)).toEqual([]);
    expect(keys.jwks(end - 1).keys.map((k) => k.kid)).toContain(oldKid);
    expect(keys.jwks(end).keys.map((k) => k.kid)).toEqual([newKid]);
    expect(await keys.prune(end)).toEqual([oldKid]);
    expect(keyFiles(dir)).toEqual([`${newKid}.json`]);

    // Verify at a time the token was valid, so the failure is the missing key, not expiry.
    const jwks = createLocalJWKSet(keys.jwks(end));
    await expect(
      jwtVerify(token, jwks, { issuer, audience: aud, currentDate: new Date(retiredAt) }),
    ).rejects.toBeInstanceOf(errors.JWKSNoMatchingKey);
  });

  it('sees a rotation by another instance or by the CLI function after reload()', async () => {
    const dir = dirs.make();
    const server = await SigningKeys.open(dir, opts);
    const other = await SigningKeys.open(dir, opts);
    const first = server.activeKid;
    expect(await server.reload()).toBe(false); // nothing changed: no work

    const second = await other.rotate(T0 + 1000);
    expect(await server.reload()).toBe(true);
    expect(server.activeKid).toBe(second);
    expect(
      server
        .jwks(T0 + 1000)
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual([first, second].sort());

    const third = await rotateSigningKey(dir, T0 + 2000);
    await server.reload();
    expect(server.activeKid).toBe(third);
    expect(decodeProtectedHeader(await sign(server, T0 + 2000)).kid).toBe(third);
    expect(keyFiles(dir)).toHaveLength(3);
  });

  it('two instances generating the first key at once agree on one active key and publish both', async () => {
    const dir = dirs.make();
    const [a, b] = await Promise.all([SigningKeys.open(dir, opts), SigningKeys.open(dir, opts)]);
    await Promise.all([a.reload(), b.reload()]);
    expect(a.activeKid).toBe(b.activeKid);
    const kids = keyFiles(dir).map((n) => n.slice(0, -'.json'.length));
    expect(
      a
        .jwks()
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual(kids.sort());
    // A token from whichever key each instance signed with verifies against either JWKS.
    await verify(b, await sign(a), T0);
  });

  it('refuses a key file whose name is not its thumbprint', async () => {
    const dir = dirs.make();
    const keys = await SigningKeys.open(dir, opts);
    const file = readFileSync(join(dir, `${keys.activeKid}.json`), 'utf8');
    writeFileSync(join(dir, 'not-the-kid.json'), file, { mode: 0o600 });
    await expect(keys.reload()).rejects.toThrow(/not-the-kid\.json is malformed/);
    expect(keys.activeKid).toBeDefined(); // the loaded keys stay in use
  });

  it('a keys directory and key files left open to others are tightened to 0700/0600 at open, with a warning', async () => {
    const dir = dirs.make();
    const first = await SigningKeys.open(dir, opts);
    const keyFile = join(dir, `${first.activeKid}.json`);
    chmodSync(dir, 0o755);
    chmodSync(keyFile, 0o644);
    const warnings: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) warnings.push(JSON.parse(line));
        done();
      },
    });
    await SigningKeys.open(dir, { ...opts, logger: pino(sink) });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(warnings).toEqual([
      expect.objectContaining({ level: 40, path: dir, mode: '0755', now: '0700' }),
      expect.objectContaining({ level: 40, path: keyFile, mode: '0644', now: '0600' }),
    ]);
  });
});
