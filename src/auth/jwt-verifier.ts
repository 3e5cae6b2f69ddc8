import { readFileSync } from 'node:fs';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  jwtVerify,
} from 'jose';
import type { Principal } from './principal.js';

export interface JwtOptions {
  /** Where the issuer publishes its keys (fetched and cached; refetched for an unknown `kid`). */
  jwksUrl?: string;
  /** Or a local JWKS file. */
  jwksFile?: string;
  issuer: string;
  audience: string;
  /** Claim naming the principal's tenant. */
  tenantClaim: string;
  /** Claim naming the principal. */
  principalClaim: string;
}

/** Clock skew tolerated between the token's issuer and us. */
const CLOCK_TOLERANCE_S = 30;

/** Verifies bearer JWTs: signature (against the JWKS), issuer, audience, expiry, not-before. */
export class JwtVerifier {
  readonly #o: JwtOptions;
  readonly #keys: JWTVerifyGetKey;

  constructor(o: JwtOptions) {
    this.#o = o;
    if (o.jwksUrl) this.#keys = createRemoteJWKSet(new URL(o.jwksUrl));
    else if (o.jwksFile)
      this.#keys = createLocalJWKSet(JSON.parse(readFileSync(o.jwksFile, 'utf8')) as JSONWebKeySet);
    else throw new Error('a JWKS URL or file is required');
  }

  /** The token's principal, or why it is refused (a short reason, safe to show the caller). */
  async verify(token: string): Promise<Principal | { reason: string }> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#keys, {
        issuer: this.#o.issuer,
        audience: this.#o.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        // A bearer token without an expiry would be a credential for ever (RFC 9068 requires exp).
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      return { reason: describe(err) };
    }
    const id = payload[this.#o.principalClaim];
    const tenant = payload[this.#o.tenantClaim];
    if (typeof id !== 'string' || id === '')
      return { reason: `the token has no ${this.#o.principalClaim} claim` };
    if (typeof tenant !== 'string' || tenant === '')
      return { reason: `the token has no ${this.#o.tenantClaim} claim` };
    return { id, tenant, via: 'jwt' };
  }
}

function describe(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the token's ${err.claim} claim is not accepted`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the token signature does not verify';
  if (err instanceof errors.JWKSNoMatchingKey) return 'the token was not signed by a key of the issuer';
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JOSEError)
    return 'the token cannot be verified';
  return 'the token cannot be verified';
}
