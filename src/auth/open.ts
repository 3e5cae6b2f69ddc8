import { ConfigError } from '../config/error.js';
import { requireReadableFile } from '../files/required-file.js';
import { ApiKeys } from './api-keys.js';
import { Authenticator } from './authenticator.js';
import { type JwtOptions, JwtVerifier } from './jwt-verifier.js';

/** Loopback hosts, where an anonymous server is reachable from this machine only. */
export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

/** Who may call: the settings of docs/settings.md's API keys, JWT and anonymous rows. */
export interface AuthSettings {
  apiKeysFile?: string;
  /** JWT verification, when a key source (URL or file), the issuer and the audience are set. */
  jwt?: Omit<JwtOptions, 'clock'>;
  /** HOST: whether anonymous callers reach it from this machine only. */
  host: string;
  allowAnonymous: boolean;
  /** Served from inside an app of the user's (createServer's `listen: false`). */
  mounted: boolean;
}

/**
 * The authenticator the settings ask for. Serving anonymous callers on an address other machines
 * reach is refused unless ALLOW_ANONYMOUS=true says it is meant; so is serving them from inside an
 * app of the user's (`mounted`), whose reach the server cannot see.
 */
export function openAuthenticator(o: AuthSettings, problem?: (message: string) => void): Authenticator {
  let apiKeys: ApiKeys | undefined;
  if (o.apiKeysFile) {
    requireReadableFile(
      'API_KEYS_FILE',
      o.apiKeysFile,
      `make it with a first key: API_KEYS_FILE=${o.apiKeysFile} taskhandle api-keys add --principal NAME --tenant NAME`,
    );
    try {
      apiKeys = new ApiKeys(o.apiKeysFile, problem);
    } catch (err) {
      throw new ConfigError(`API_KEYS_FILE=${o.apiKeysFile}: ${(err as Error).message}`);
    }
  }
  let jwt: JwtVerifier | undefined;
  if (o.jwt) {
    const { jwksFile } = o.jwt;
    if (jwksFile)
      requireReadableFile(
        'JWT_JWKS_FILE',
        jwksFile,
        'save the issuer\'s public keys there (a JWKS: {"keys": [...]}), or set JWT_JWKS_URL instead',
      );
    try {
      jwt = new JwtVerifier(o.jwt);
    } catch (err) {
      throw new ConfigError(`JWT_JWKS_FILE=${jwksFile}: ${(err as Error).message}`);
    }
  }
  const authenticator = new Authenticator({ apiKeys, jwt });
  if (authenticator.anonymous && o.mounted && !o.allowAnonymous) {
    throw new ConfigError(
      'createServer({ listen: false }): the app this server is mounted in decides who can reach it, so ' +
        'anonymous callers are served only with allowAnonymous: true (for an app only this machine reaches). ' +
        'Otherwise give credentials: apiKeysFile, or jwtJwksUrl/jwtJwksFile with jwtIssuer and jwtAudience.',
    );
  }
  if (authenticator.anonymous && !isLoopback(o.host) && !o.allowAnonymous) {
    throw new ConfigError(
      `HOST=${o.host}: refusing to serve anonymous callers on an address other machines can reach. ` +
        'Configure API_KEYS_FILE or JWT_JWKS_URL/JWT_JWKS_FILE (with JWT_ISSUER and JWT_AUDIENCE), ' +
        'or set ALLOW_ANONYMOUS=true if that is really meant.',
    );
  }
  return authenticator;
}
