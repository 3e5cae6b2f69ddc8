import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  base64url,
  exportJWK,
  type GenerateKeyPairResult,
  generateKeyPair,
  type JSONWebKeySet,
  type JWK,
  SignJWT,
} from 'jose';

/** What the verifiers under test expect; tokens carry these unless a test says otherwise. */
export const ISSUER = 'https://idp.example';
export const AUDIENCE = 'https://agent.example';

export interface SigningKey {
  kid: string;
  alg: 'ES256' | 'RS256';
  privateKey: GenerateKeyPairResult['privateKey'];
  /** The public half, as published in a JWKS. */
  jwk: JWK;
}

export async function signingKey(alg: SigningKey['alg'], kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export const jwks = (...keys: SigningKey[]): JSONWebKeySet => ({ keys: keys.map((k) => k.jwk) });

/** Now, in JWT seconds (follows faked Date). */
export const nowS = (): number => Math.floor(Date.now() / 1000);

export interface TokenOptions {
  /** Claims merged over `{ sub: 'alice', tenant: 'acme' }`; `undefined` drops one. */
  claims?: Record<string, unknown>;
  iss?: string;
  aud?: string;
  /** Seconds since the epoch; default now + 5 min. */
  exp?: number;
  nbf?: number;
  /** The header's kid; default the key's own. */
  kid?: string;
}

export function token(key: SigningKey, o: TokenOptions = {}): Promise<string> {
  const jwt = new SignJWT({ sub: 'alice', tenant: 'acme', ...o.claims })
    .setProtectedHeader({ alg: key.alg, kid: o.kid ?? key.kid, typ: 'JWT' })
    .setIssuer(o.iss ?? ISSUER)
    .setAudience(o.aud ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(o.exp ?? nowS() + 300);
  if (o.nbf !== undefined) jwt.setNotBefore(o.nbf);
  return jwt.sign(key.privateKey);
}

/** An unsecured JWT (`alg: none`, empty signature) with otherwise acceptable claims. */
export function unsignedToken(): string {
  const part = (v: object) => base64url.encode(JSON.stringify(v));
  const payload = { sub: 'alice', tenant: 'acme', iss: ISSUER, aud: AUDIENCE, exp: nowS() + 300 };
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}

/** The same token with its payload changed and the original signature kept. */
export function tamper(jwt: string, change: Record<string, unknown>): string {
  const [header, payload, signature] = jwt.split('.');
  const claims = JSON.parse(new TextDecoder().decode(base64url.decode(payload ?? ''))) as Record<
    string,
    unknown
  >;
  return `${header}.${base64url.encode(JSON.stringify({ ...claims, ...change }))}.${signature}`;
}

/** An issuer's JWKS endpoint on 127.0.0.1 whose key set and status the test changes. */
export async function jwksServer(initial: JSONWebKeySet) {
  let current = initial;
  let status = 200;
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(current));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    /** How many times the key set was fetched. */
    get requests() {
      return requests;
    },
    publish(next: JSONWebKeySet) {
      current = next;
    },
    respondWith(next: number) {
      status = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // fetch keeps connections alive; without this close() waits for them to time out.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
