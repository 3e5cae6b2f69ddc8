import type { IncomingHttpHeaders } from 'node:http';
import { API_KEY_PREFIX, type ApiKeys } from './api-keys.js';
import type { JwtVerifier } from './jwt-verifier.js';
import { ANONYMOUS, type Principal } from './principal.js';

/** Why credentials were refused: none sent, not a Bearer token, an unknown API key, a JWT not valid. */
export type AuthFailure = 'no-credentials' | 'not-bearer' | 'unknown-key' | 'invalid-token';

export type AuthResult =
  | { ok: true; principal: Principal }
  /** 401: `challenge` goes into `WWW-Authenticate`, `message` to the caller; `kind` to the metrics. */
  | { ok: false; challenge: string; message: string; kind: AuthFailure };

export interface AuthenticatorOptions {
  apiKeys?: ApiKeys;
  jwt?: JwtVerifier;
}

/**
 * Who is calling, from the request headers: an API key (`X-API-Key: th_...` or `Authorization:
 * Bearer th_...`) or a JWT (`Authorization: Bearer <jwt>`). With neither configured, every caller
 * is the anonymous principal; with either configured, a request without valid credentials is
 * refused.
 */
export class Authenticator {
  readonly #options: AuthenticatorOptions;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
  }

  /** Anonymous use: no authentication configured. */
  get anonymous(): boolean {
    return !this.#options.apiKeys && !this.#options.jwt;
  }

  /** How many API keys are accepted now; undefined without API_KEYS_FILE. */
  get apiKeyCount(): number | undefined {
    return this.#options.apiKeys?.size;
  }

  async authenticate(headers: IncomingHttpHeaders): Promise<AuthResult> {
    if (this.anonymous) return { ok: true, principal: ANONYMOUS };
    const apiKey = header(headers['x-api-key']);
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header(headers.authorization) ?? '')?.[1];
    if (apiKey !== undefined) return this.#byKey(apiKey);
    if (bearer === undefined) {
      const kind = headers.authorization ? 'not-bearer' : 'no-credentials';
      const sent = headers.authorization
        ? 'the Authorization header is not a Bearer token'
        : 'no credentials';
      return this.#refuse(`${sent}; send ${this.#expected()}`, undefined, kind);
    }
    if (bearer.startsWith(API_KEY_PREFIX) && this.#options.apiKeys) return this.#byKey(bearer);
    if (!this.#options.jwt) return this.#refuse('unknown API key', 'invalid_token', 'unknown-key');
    const verified = await this.#options.jwt.verify(bearer);
    return 'reason' in verified
      ? this.#refuse(verified.reason, 'invalid_token', 'invalid-token')
      : { ok: true, principal: verified };
  }

  #byKey(key: string): AuthResult {
    const principal = this.#options.apiKeys?.find(key);
    return principal
      ? { ok: true, principal }
      : this.#refuse('unknown API key', 'invalid_token', 'unknown-key');
  }

  #expected(): string {
    const ways = [];
    if (this.#options.apiKeys) ways.push('an API key (X-API-Key or Authorization: Bearer)');
    if (this.#options.jwt) ways.push('a JWT (Authorization: Bearer)');
    return ways.join(' or ');
  }

  /** RFC 6750: the challenge names the scheme, and the error only when credentials were sent. */
  #refuse(message: string, error: 'invalid_token' | undefined, kind: AuthFailure): AuthResult {
    const detail = error ? `, error="${error}", error_description="${message.replace(/"/g, "'")}"` : '';
    return {
      ok: false,
      challenge: `Bearer realm="taskhandle"${detail}`,
      message: `Unauthenticated: ${message}`,
      kind,
    };
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
