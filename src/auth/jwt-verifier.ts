import { readFileSync, statSync } from 'node:fs';
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
  /** Claim listing the skills the principal may use (an array of ids); absent claim: every skill. */
  skillsClaim?: string;
  /** Claim holding the principal's roles (a string or a list; OPERATORS may name them as role:NAME). */
  rolesClaim?: string;
  clock?: () => number;
}

/** How often a local JWKS file is checked for a change (on use, no timer). */
const FILE_CHECK_MS = 2000;

/** Clock skew tolerated between the token's issuer and us. */
const CLOCK_TOLERANCE_S = 30;

/** Verifies bearer JWTs: signature (against the JWKS), issuer, audience, expiry, not-before. */
export class JwtVerifier {
  readonly #options: JwtOptions;
  #keys: JWTVerifyGetKey;
  /** A local file's mtime, inode and size when read; rotated keys are picked up without a restart. */
  #fileSignature = '';
  #checkedAt = 0;

  constructor(o: JwtOptions) {
    this.#options = o;
    if (o.jwksUrl) this.#keys = createRemoteJWKSet(new URL(o.jwksUrl));
    else if (o.jwksFile) this.#keys = this.#readFile(o.jwksFile);
    else throw new Error('a JWKS URL or file is required');
  }

  #readFile(file: string): JWTVerifyGetKey {
    const s = statSync(file);
    const keys = createLocalJWKSet(JSON.parse(readFileSync(file, 'utf8')) as JSONWebKeySet);
    this.#fileSignature = `${s.mtimeMs}:${s.ino}:${s.size}`;
    return keys;
  }

  /** Rereads a changed local JWKS file; a file that became unreadable keeps the keys read before. */
  #refresh(): void {
    const file = this.#options.jwksFile;
    const now = (this.#options.clock ?? Date.now)();
    if (!file || now - this.#checkedAt < FILE_CHECK_MS) return;
    this.#checkedAt = now;
    try {
      const s = statSync(file);
      if (`${s.mtimeMs}:${s.ino}:${s.size}` !== this.#fileSignature) this.#keys = this.#readFile(file);
    } catch {
      // keep the keys in force
    }
  }

  /** The token's principal, or why it is refused (a short reason, safe to show the caller). */
  async verify(token: string): Promise<Principal | { reason: string }> {
    this.#refresh();
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#keys, {
        issuer: this.#options.issuer,
        audience: this.#options.audience,
        clockTolerance: CLOCK_TOLERANCE_S,
        // A bearer token without an expiry would be a credential for ever (RFC 9068 requires exp).
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      return { reason: describe(err) };
    }
    const id = payload[this.#options.principalClaim];
    const tenant = payload[this.#options.tenantClaim];
    if (typeof id !== 'string' || id === '')
      return { reason: `the token has no ${this.#options.principalClaim} claim` };
    if (typeof tenant !== 'string' || tenant === '')
      return { reason: `the token has no ${this.#options.tenantClaim} claim` };
    const skills = this.#options.skillsClaim ? payload[this.#options.skillsClaim] : undefined;
    if (skills !== undefined && !(Array.isArray(skills) && skills.every((x) => typeof x === 'string'))) {
      return { reason: `the token's ${this.#options.skillsClaim} claim is not a list of skill ids` };
    }
    const roles = rolesOf(this.#options.rolesClaim ? payload[this.#options.rolesClaim] : undefined);
    return {
      id,
      tenant,
      via: 'jwt',
      ...(skills ? { skills: new Set(skills as string[]) } : {}),
      ...(roles.size > 0 ? { roles } : {}),
    };
  }
}

/** A roles claim, as one role (a string) or several (a list); anything else grants no role. */
function rolesOf(claim: unknown): ReadonlySet<string> {
  const values = typeof claim === 'string' ? [claim] : Array.isArray(claim) ? claim : [];
  return new Set(values.filter((v): v is string => typeof v === 'string' && v !== ''));
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
