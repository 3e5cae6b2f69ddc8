import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { addApiKey } from '../../src/auth/api-keys.js';
import { openAuthenticator } from '../../src/auth/open.js';
import { ConfigError } from '../../src/config/error.js';
import { loadConfig } from '../../src/config/settings.js';
import { authSettingsOf } from '../../src/server/backend.js';
import { tempDirs } from '../helpers.js';
import { AUDIENCE, ISSUER, jwks, signingKey, token } from './jwt-fixtures.js';

const dirs = tempDirs();

const open = (env: NodeJS.ProcessEnv) => openAuthenticator(authSettingsOf(loadConfig(env), false));

/** The message of the ConfigError openAuthenticator throws for `env`. */
const refusal = (env: NodeJS.ProcessEnv): string => {
  try {
    open(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`openAuthenticator accepted ${JSON.stringify(env)}`);
};

let dir: string;
beforeAll(() => {
  dir = dirs.make();
});

describe('openAuthenticator', () => {
  it('refuses to serve anonymous callers on a public address, naming ALLOW_ANONYMOUS', () => {
    for (const HOST of ['0.0.0.0', '::', '192.168.1.10', 'agent.example']) {
      const message = refusal({ HOST });
      expect(message).toMatch(new RegExp(`^HOST=${HOST}: refusing to serve anonymous callers`));
      expect(message).toContain('ALLOW_ANONYMOUS=true');
      expect(message).toContain('API_KEYS_FILE');
    }
  });

  it('serves anonymous callers on a public address when ALLOW_ANONYMOUS=true', () => {
    expect(open({ HOST: '0.0.0.0', ALLOW_ANONYMOUS: 'true' }).anonymous).toBe(true);
  });

  it('serves anonymous callers on loopback without being asked', () => {
    expect(open({}).anonymous).toBe(true); // HOST defaults to 127.0.0.1
    for (const HOST of ['127.0.0.1', '127.1.2.3', '::1', 'localhost']) {
      expect(open({ HOST }).anonymous).toBe(true);
    }
  });

  it('serves a public address with API keys, from the file named', async () => {
    const file = join(dir, 'keys.json');
    const key = addApiKey(file, 'alice', 'acme');
    const auth = open({ HOST: '0.0.0.0', API_KEYS_FILE: file });
    expect(auth.anonymous).toBe(false);
    expect(await auth.authenticate({ 'x-api-key': key })).toEqual({
      ok: true,
      principal: { id: 'alice', tenant: 'acme', via: 'api-key' },
    });
  });

  it('refuses a keys file that is not there, naming API_KEYS_FILE and how to make it', () => {
    const file = join(dir, 'not-yet.json');
    expect(refusal({ HOST: '0.0.0.0', API_KEYS_FILE: file })).toMatch(
      new RegExp(`^API_KEYS_FILE=${file}: no such file.*api-keys add`),
    );
  });

  it('treats an empty keys file as no keys: nobody gets in, nobody is anonymous', async () => {
    const file = join(dir, 'empty.json');
    writeFileSync(file, '[]');
    const auth = open({ HOST: '0.0.0.0', API_KEYS_FILE: file });
    expect(auth.anonymous).toBe(false);
    expect(await auth.authenticate({})).toMatchObject({ ok: false });
  });

  it('refuses a malformed keys file, naming API_KEYS_FILE and the entry', () => {
    const file = join(dir, 'bad-keys.json');
    writeFileSync(file, JSON.stringify([{ principal: 'alice', tenant: 'acme', keyHash: 'plain' }]));
    expect(refusal({ HOST: '0.0.0.0', API_KEYS_FILE: file })).toMatch(
      new RegExp(`^API_KEYS_FILE=${file}: .*entry 0\\.keyHash`),
    );
    writeFileSync(file, '{');
    expect(refusal({ API_KEYS_FILE: file })).toMatch(new RegExp(`^API_KEYS_FILE=${file}: .*not a JSON file`));
  });

  it('serves a public address with JWT verification from a local key set', async () => {
    const key = await signingKey('ES256', 'k1');
    const file = join(dir, 'jwks.json');
    writeFileSync(file, JSON.stringify(jwks(key)));
    const auth = open({ HOST: '0.0.0.0', JWT_JWKS_FILE: file, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE });
    expect(auth.anonymous).toBe(false);
    expect(await auth.authenticate({ authorization: `Bearer ${await token(key)}` })).toEqual({
      ok: true,
      principal: { id: 'alice', tenant: 'acme', via: 'jwt' },
    });
  });

  it('opens with a JWKS URL without fetching it', () => {
    const env = { HOST: '0.0.0.0', JWT_JWKS_URL: 'http://127.0.0.1:9/jwks.json' };
    expect(open({ ...env, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE }).anonymous).toBe(false);
  });

  it('refuses a JWKS file that is missing or not a key set, naming JWT_JWKS_FILE', () => {
    const settings = { JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE };
    const missing = join(dir, 'missing-jwks.json');
    expect(refusal({ ...settings, JWT_JWKS_FILE: missing })).toMatch(
      new RegExp(`^JWT_JWKS_FILE=${missing}: `),
    );
    const notJwks = join(dir, 'not-jwks.json');
    writeFileSync(notJwks, JSON.stringify({ keys: 'none' }));
    expect(refusal({ ...settings, JWT_JWKS_FILE: notJwks })).toMatch(
      new RegExp(`^JWT_JWKS_FILE=${notJwks}: `),
    );
  });
});
