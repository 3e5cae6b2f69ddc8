import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { type AddressPolicy, parseAllowList } from './push/address-policy.js';

/** Where the package lives (dist/src/config.js -> the repository root). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ message: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 86_400 * SECOND;

/** Every setting, read from the environment once at start. The README lists them. */
const Env = z.object({
  PORT: int(0, 65_535).default(41_241),
  HOST: z.string().min(1).default('127.0.0.1'),
  PUBLIC_URL: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  DATABASE_URL: z.string().min(1).default('sqlite:./data/taskhandle.db'),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,47}$/, 'must be a lower-case SQL name: a-z, 0-9 and _, at most 48 characters')
    .default('public'),
  DATABASE_POOL_MAX: int(1, 1000).default(10),
  SQLITE_SYNCHRONOUS: z.enum(['full', 'normal']).default('full'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AGENT_CARD_FILE: z.string().min(1).default(`${PACKAGE_ROOT}agent-card.json`),
  DEFAULT_SKILL: z.string().min(1).optional(),
  MAX_BODY_BYTES: int(1024).default(1024 * 1024),
  BLOCKING_TIMEOUT_MS: int(0).default(30 * SECOND),
  CANCEL_GRACE_MS: int(0).default(5 * SECOND),
  MAX_TTL_MS: int(1000).default(30 * DAY),
  RUNNER_CONCURRENCY: int(1, 10_000).default(16),
  LEASE_MS: int(300).default(30 * SECOND),
  RUNNER_POLL_MS: int(10).default(SECOND),
  MAX_INTERRUPTIONS: int(0, 1000).default(3),
  SWEEP_INTERVAL_MS: int(100).default(60 * SECOND),
  SHUTDOWN_TIMEOUT_MS: int(0).default(10 * SECOND),
  SSE_KEEPALIVE_MS: int(100).default(15 * SECOND),
  PUSH_ALLOW: z.string().default(''),
  PUSH_ALLOW_PUBLIC: z.enum(['true', 'false']).default('true'),
  PUSH_TIMEOUT_MS: int(100).default(10 * SECOND),
  PUSH_MAX_AGE_MS: int(SECOND).default(DAY),
  PUSH_RETRY_MS: int(10).default(SECOND),
  PUSH_RETRY_MAX_MS: int(10).default(10 * MINUTE),
  PUSH_CONCURRENCY: int(1, 10_000).default(32),
  PUSH_POLL_MS: int(10).default(SECOND),
  KEYS_DIR: z.string().min(1).optional(),
  API_KEYS_FILE: z.string().min(1).optional(),
  JWT_JWKS_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
  JWT_JWKS_FILE: z.string().min(1).optional(),
  JWT_ISSUER: z.string().min(1).optional(),
  JWT_AUDIENCE: z.string().min(1).optional(),
  JWT_TENANT_CLAIM: z.string().min(1).default('tenant'),
  JWT_PRINCIPAL_CLAIM: z.string().min(1).default('sub'),
  JWT_SKILLS_CLAIM: z.string().min(1).optional(),
  ALLOW_ANONYMOUS: z.enum(['true', 'false']).default('false'),
  ANONYMOUS_MAX_TTL_MS: int(1000).default(DAY),
  EXTENDED_SKILLS: z.string().default(''),
  RATE_LIMIT_PER_S: int(0).default(0),
  COMMANDS_FILE: z.string().min(1).optional(),
  // Under the runner's 2 s after-abort wait at shutdown: a command ignoring SIGTERM is still killed in time.
  COMMAND_KILL_GRACE_MS: int(0).default(1500),
  MAX_ACTIVE_TASKS: int(0).default(10_000),
  MAX_MESSAGE_PARTS: int(1).default(100),
  MAX_HISTORY_MESSAGES: int(1).default(1000),
  MAX_HISTORY_BYTES: int(1024).default(4 * 2 ** 20),
  MAX_ARTIFACT_BYTES: int(1).default(100 * 2 ** 20),
  /** Artifacts up to this many bytes travel inline; larger ones by reference to the download route. */
  INLINE_ARTIFACT_BYTES: int(0, 16 * 2 ** 20).default(64 * 2 ** 10),
  /** Artifact bytes a principal may have stored at once, over all its tasks (`0`: no quota). */
  MAX_STORED_BYTES: int(0).default(10 * 2 ** 30),
  /** Bytes of rendered task JSON kept to answer polls of unchanged tasks. */
  TASK_CACHE_BYTES: int(0).default(64 * 2 ** 20),
  /** How deeply JSON in a request body may nest (objects and arrays); deeper bodies are refused. */
  MAX_JSON_DEPTH: int(2, 1000).default(64),
  /** Delivery attempts to a webhook whose host name does not resolve before it is dead-lettered. */
  PUSH_DNS_MAX_ATTEMPTS: int(1, 1000).default(5),
  RATE_LIMIT_BURST: int(1).optional(),
});

export type Config = z.infer<typeof Env> & {
  database: DatabaseConfig;
  /** PUSH_ALLOW, parsed: the addresses webhooks may have besides public ones. */
  pushPolicy: AddressPolicy;
  /** Where the webhook signing keys live: KEYS_DIR, else `keys/` beside the SQLite file. */
  keysDir: string;
};

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string; schema: string; poolMax: number };

/** A setting is wrong: the message names it, and the process stops before serving anything. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) => `  ${i.path.join('.')}=${JSON.stringify(env[String(i.path[0])])}: ${i.message}`,
    );
    throw new ConfigError(`Invalid settings:\n${lines.join('\n')}`);
  }
  const database = parseDatabaseUrl(parsed.data);
  let pushPolicy: AddressPolicy;
  try {
    pushPolicy = parseAllowList(parsed.data.PUSH_ALLOW, parsed.data.PUSH_ALLOW_PUBLIC === 'true');
  } catch (err) {
    throw new ConfigError(`PUSH_ALLOW=${JSON.stringify(parsed.data.PUSH_ALLOW)}: ${(err as Error).message}`);
  }
  checkJwtSettings(parsed.data);
  const beside =
    database.kind === 'sqlite' && database.path !== ':memory:' ? dirname(database.path) : './data';
  return { ...parsed.data, database, pushPolicy, keysDir: parsed.data.KEYS_DIR ?? join(beside, 'keys') };
}

/** JWT verification needs exactly one key source, and the issuer and audience it checks. */
function checkJwtSettings(e: z.infer<typeof Env>): void {
  const source = e.JWT_JWKS_URL ?? e.JWT_JWKS_FILE;
  if (e.JWT_JWKS_URL && e.JWT_JWKS_FILE)
    throw new ConfigError('JWT_JWKS_URL and JWT_JWKS_FILE: set one of them, not both');
  if (!source && (e.JWT_ISSUER || e.JWT_AUDIENCE))
    throw new ConfigError(
      'JWT_ISSUER/JWT_AUDIENCE: also set JWT_JWKS_URL or JWT_JWKS_FILE (the keys to verify with)',
    );
  if (source && !e.JWT_ISSUER) throw new ConfigError('JWT_ISSUER: required when JWT verification is on');
  if (source && !e.JWT_AUDIENCE) throw new ConfigError('JWT_AUDIENCE: required when JWT verification is on');
}

/** `sqlite:<path>`, `sqlite::memory:`, `file:<path>`, or `postgres://...` (with its schema and pool size). */
function parseDatabaseUrl(e: z.infer<typeof Env>): DatabaseConfig {
  const url = e.DATABASE_URL;
  const match = /^(?:sqlite|file):(?:\/\/)?(.+)$/.exec(url);
  if (match?.[1]) return { kind: 'sqlite', path: match[1] };
  if (/^postgres(ql)?:\/\//.test(url)) {
    if (!URL.canParse(url)) throw new ConfigError(`DATABASE_URL=${redactUrl(url)}: not a valid URL`);
    return { kind: 'postgres', url, schema: e.DATABASE_SCHEMA, poolMax: e.DATABASE_POOL_MAX };
  }
  throw new ConfigError(
    `DATABASE_URL=${redactUrl(url)}: expected sqlite:<path> (for example sqlite:./data/taskhandle.db) or postgres://user@host:5432/database`,
  );
}

/** The database as logs may show it: a password in the URL is masked. */
export function describeDatabase(d: DatabaseConfig): Record<string, string> {
  return d.kind === 'sqlite' ? d : { kind: d.kind, url: redactUrl(d.url), schema: d.schema };
}

function redactUrl(url: string): string {
  if (!URL.canParse(url)) return url.replace(/:[^:@/]*@/, ':***@');
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
  return parsed.href;
}
