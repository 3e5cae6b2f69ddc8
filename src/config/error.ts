/**
 * A setting or option is wrong: the message names it as the operator gave it and says what to do,
 * and the server stops before serving anything (`taskhandle serve` exits 78, EX_CONFIG).
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
