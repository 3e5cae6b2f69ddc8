import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/error.js';
import { loadConfig } from '../../src/config/settings.js';

const JWT = {
  JWT_JWKS_URL: 'https://idp.example/.well-known/jwks.json',
  JWT_ISSUER: 'https://idp.example',
  JWT_AUDIENCE: 'https://agent.example',
};

/** The message of the ConfigError loadConfig throws for `env`. */
const refusal = (env: NodeJS.ProcessEnv): string => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
};

describe('loadConfig: authentication settings', () => {
  it('defaults to no authentication, anonymous not allowed off loopback, claims sub and tenant', () => {
    const c = loadConfig({});
    expect(c.API_KEYS_FILE).toBeUndefined();
    expect(c.JWT_JWKS_URL).toBeUndefined();
    expect(c.JWT_JWKS_FILE).toBeUndefined();
    expect(c.ALLOW_ANONYMOUS).toBe('false');
    expect(c.JWT_PRINCIPAL_CLAIM).toBe('sub');
    expect(c.JWT_TENANT_CLAIM).toBe('tenant');
  });

  it('accepts a JWKS URL or a JWKS file with issuer and audience', () => {
    expect(loadConfig(JWT)).toMatchObject(JWT);
    const { JWT_JWKS_URL: _, ...rest } = JWT;
    expect(loadConfig({ ...rest, JWT_JWKS_FILE: './jwks.json' }).JWT_JWKS_FILE).toBe('./jwks.json');
  });

  it('refuses both a JWKS URL and a JWKS file', () => {
    expect(refusal({ ...JWT, JWT_JWKS_FILE: './jwks.json' })).toMatch(/^JWT_JWKS_URL and JWT_JWKS_FILE: /);
  });

  it('refuses a key set without the issuer or the audience to check', () => {
    expect(refusal({ ...JWT, JWT_ISSUER: undefined })).toMatch(/^JWT_ISSUER: required/);
    expect(refusal({ ...JWT, JWT_AUDIENCE: undefined })).toMatch(/^JWT_AUDIENCE: required/);
    expect(refusal({ JWT_JWKS_FILE: './jwks.json' })).toMatch(/^JWT_ISSUER: required/);
  });

  it('refuses an issuer or an audience without a key set to verify with', () => {
    for (const env of [{ JWT_ISSUER: JWT.JWT_ISSUER }, { JWT_AUDIENCE: JWT.JWT_AUDIENCE }]) {
      expect(refusal(env)).toMatch(/also set JWT_JWKS_URL or JWT_JWKS_FILE/);
    }
    expect(refusal({ JWT_ISSUER: JWT.JWT_ISSUER })).toMatch(/^JWT_ISSUER/);
  });

  it('refuses a JWKS URL that is not http(s), and ALLOW_ANONYMOUS other than true/false', () => {
    expect(refusal({ ...JWT, JWT_JWKS_URL: 'file:///etc/jwks.json' })).toMatch(
      /JWT_JWKS_URL="file:\/\/\/etc\/jwks.json": must be an http\(s\) URL/,
    );
    expect(refusal({ ALLOW_ANONYMOUS: 'yes' })).toMatch(/ALLOW_ANONYMOUS="yes"/);
  });
});
