import { type Config, ConfigError } from '../config/settings.js';
import { requireReadableFile } from '../files/required-file.js';
import { ApiKeys } from './api-keys.js';
import { Authenticator } from './authenticator.js';
import { JwtVerifier } from './jwt-verifier.js';

/** Loopback hosts, where an anonymous server is reachable from this machine only. */
export const isLoopback = (host: string): boolean =>
  host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

/**
 * The authenticator the settings ask for. Serving anonymous callers on an address other machines
 * reach is refused unless ALLOW_ANONYMOUS=true says it is meant; so is serving them from inside an
 * app of the user's (`mounted`), whose reach the server cannot see.
 */
export function openAuthenticator(config: Config, mode = { mounted: false }): Authenticator {
  let apiKeys: ApiKeys | undefined;
  if (config.API_KEYS_FILE) {
    requireReadableFile(
      'API_KEYS_FILE',
      config.API_KEYS_FILE,
      `make it with a first key: API_KEYS_FILE=${config.API_KEYS_FILE} taskhandle api-keys add --principal NAME --tenant NAME`,
    );
    try {
      apiKeys = new ApiKeys(config.API_KEYS_FILE);
    } catch (err) {
      throw new ConfigError(`API_KEYS_FILE=${config.API_KEYS_FILE}: ${(err as Error).message}`);
    }
  }
  let jwt: JwtVerifier | undefined;
  if (config.JWT_ISSUER && config.JWT_AUDIENCE) {
    if (config.JWT_JWKS_FILE)
      requireReadableFile(
        'JWT_JWKS_FILE',
        config.JWT_JWKS_FILE,
        'save the issuer\'s public keys there (a JWKS: {"keys": [...]}), or set JWT_JWKS_URL instead',
      );
    try {
      jwt = new JwtVerifier({
        jwksUrl: config.JWT_JWKS_URL,
        jwksFile: config.JWT_JWKS_FILE,
        issuer: config.JWT_ISSUER,
        audience: config.JWT_AUDIENCE,
        tenantClaim: config.JWT_TENANT_CLAIM,
        principalClaim: config.JWT_PRINCIPAL_CLAIM,
        skillsClaim: config.JWT_SKILLS_CLAIM,
        rolesClaim: config.JWT_ROLES_CLAIM,
      });
    } catch (err) {
      throw new ConfigError(`JWT_JWKS_FILE=${config.JWT_JWKS_FILE}: ${(err as Error).message}`);
    }
  }
  const authenticator = new Authenticator({ apiKeys, jwt });
  if (authenticator.anonymous && mode.mounted && config.ALLOW_ANONYMOUS !== 'true') {
    throw new ConfigError(
      'createServer({ listen: false }): the app this server is mounted in decides who can reach it, so ' +
        'anonymous callers are served only with allowAnonymous: true (for an app only this machine reaches). ' +
        'Otherwise give credentials: apiKeysFile, or jwtJwksUrl/jwtJwksFile with jwtIssuer and jwtAudience.',
    );
  }
  if (authenticator.anonymous && !isLoopback(config.HOST) && config.ALLOW_ANONYMOUS !== 'true') {
    throw new ConfigError(
      `HOST=${config.HOST}: refusing to serve anonymous callers on an address other machines can reach. ` +
        'Configure API_KEYS_FILE or JWT_JWKS_URL/JWT_JWKS_FILE (with JWT_ISSUER and JWT_AUDIENCE), ' +
        'or set ALLOW_ANONYMOUS=true if that is really meant.',
    );
  }
  return authenticator;
}
