import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ConfigError } from './error.js';

/** Where the package lives (dist/src/config/settings.js -> the package root). */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ message: 'must be a number' })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/**
 * What the Settings table says of a setting (see config/table.ts): `description`, and `shownDefault`
 * where the default is not a plain value. `list`: a comma-separated list, which createServer also
 * takes as an array of strings (config/options.ts).
 */
const doc = (description: string, shownDefault?: string, list?: 'list') => ({
  description,
  ...(shownDefault ? { shownDefault } : {}),
  ...(list ? { list: true } : {}),
});

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 86_400 * SECOND;

/**
 * Every setting, read from the environment once at start. Each carries what docs/settings.md says of it
 * (`npm run docs:settings` writes docs/settings.md's table from here; a test checks they agree):
 * `description`, and `shownDefault` where the default is not a plain value.
 */
const Env = z.object({
  PORT: int(0, 65_535).default(41_241).meta(doc('TCP port (`0`: any free port)')),
  HOST: z.string().min(1).default('127.0.0.1').meta(doc('interface to listen on')),
  PUBLIC_URL: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .transform((u) => u.replace(/\/+$/, ''))
    .optional()
    .meta(doc('base URL written into the agent card (set it behind a proxy)', '`http://HOST:PORT`')),
  GRPC_PORT: int(0, 65_535)
    .optional()
    .meta(doc('TCP port of the A2A gRPC binding, on `HOST` (`0`: any free port)', 'unset: no gRPC')),
  GRPC_TLS_CERT_FILE: z
    .string()
    .min(1)
    .optional()
    .meta(doc('gRPC over TLS: the certificate chain (PEM); set with `GRPC_TLS_KEY_FILE`')),
  GRPC_TLS_KEY_FILE: z
    .string()
    .min(1)
    .optional()
    .meta(doc("gRPC over TLS: the certificate's private key (PEM)")),
  GRPC_ALLOW_PLAINTEXT: z
    .enum(['true', 'false'])
    .default('false')
    .meta(doc('`true`: serve gRPC without TLS on a non-loopback `HOST` (behind a TLS-terminating proxy)')),
  DATABASE_URL: z
    .string()
    .min(1)
    .default('sqlite:./data/taskhandle.db')
    .meta(doc('the store: `sqlite:<path>` (or `file:<path>`), or `postgres://...` for several instances')),
  DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,47}$/, 'must be a lower-case SQL name: a-z, 0-9 and _, at most 48 characters')
    .default('public')
    .meta(doc('PostgreSQL: the schema of the tables (lower-case letters, digits, `_`)')),
  DATABASE_POOL_MAX: int(1, 1000).default(10).meta(doc('PostgreSQL: connections of this instance')),
  SQLITE_SYNCHRONOUS: z
    .enum(['full', 'normal'])
    .default('full')
    .meta(doc('`full` survives power loss; `normal` survives process crashes only, and is faster')),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .meta(doc('pino level: `fatal` `error` `warn` `info` `debug` `trace` `silent`')),
  AGENT_CARD_FILE: z
    .string()
    .min(1)
    .default(`${PACKAGE_ROOT}agent-card.json`)
    .meta(
      doc(
        'the card template (name, description, version, provider, modes)',
        '`./agent-card.json` of the package',
      ),
    ),
  SKILLS: z
    .string()
    .default('')
    .meta(
      doc(
        'skill modules to serve: ES module files whose exports are skills (comma-separated paths; docs/skills.md)',
        'none',
        'list',
      ),
    ),
  BUILTIN_SKILLS: z
    .string()
    .default('all')
    .meta(doc('the built-in skills offered: `all`, `none`, or their ids (comma-separated)')),
  DEFAULT_SKILL: z
    .string()
    .min(1)
    .optional()
    .meta(doc('skill for messages that name none (unset: such a message is refused, listing the skills)')),
  MAX_BODY_BYTES: int(1024)
    .default(1024 * 1024)
    .meta(doc('larger request bodies (on any method) are refused with 413')),
  MAX_JSON_DEPTH: int(2, 1000)
    .default(64)
    .meta(doc('request bodies whose JSON nests objects and arrays deeper are refused (InvalidRequest, 400)')),
  // Unset: each face's own default (A2A's under the 300 s of Node's fetch; MCP's under the 60 s
  // request timeout of the MCP SDK's clients). docs/CONFORMANCE.md says why.
  BLOCKING_TIMEOUT_MS: int(0)
    .optional()
    .meta(
      doc(
        'a blocking call answers with the task as it stands after this long: an A2A blocking send (its status message says so) and a `tools/call` of an MCP client that takes JSON only',
        'A2A `290000`, MCP `30000`',
      ),
    ),
  CANCEL_GRACE_MS: int(0)
    .default(5 * SECOND)
    .meta(doc('how long a canceled job may take to stop before the task is marked canceled anyway')),
  MAX_TTL_MS: int(1000)
    .default(30 * DAY)
    .meta(doc("cap on every skill's retention")),
  RUNNER_CONCURRENCY: int(1, 10_000).default(16).meta(doc('jobs run at once by this process')),
  MAX_RUNNING: int(0)
    .default(0)
    .meta(
      doc(
        'jobs run at once in the whole cluster (every instance on the store; `0`: only `RUNNER_CONCURRENCY` each)',
      ),
    ),
  TENANT_MAX_RUNNING: int(0)
    .default(0)
    .meta(
      doc(
        'jobs of one tenant run at once, cluster-wide (`0`: no limit but the fair share); the others wait queued',
      ),
    ),
  MAX_PRIORITY: int(0, 1000)
    .default(10)
    .meta(doc("a caller's `priority` lies from minus this to this (`0`: callers may not set one)")),
  PRIORITY_STEP_MS: int(0)
    .default(MINUTE)
    .meta(doc("each step of priority runs a task this much earlier in its owner's queue (and no earlier)")),
  LEASE_MS: int(300)
    .default(30 * SECOND)
    .meta(doc("a job's lease; a task whose runner stops renewing it is taken over after this long")),
  RUNNER_POLL_MS: int(10)
    .default(SECOND)
    .meta(doc('how often the runner looks for runnable tasks besides wake-ups on submit')),
  MAX_INTERRUPTIONS: int(0, 1000)
    .default(3)
    .meta(
      doc('a task whose runner died (crash, `kill -9`) more often than this is failed instead of re-run'),
    ),
  SWEEP_INTERVAL_MS: int(100)
    .default(60 * SECOND)
    .meta(doc('how often expired tasks are deleted')),
  SHUTDOWN_TIMEOUT_MS: int(0)
    .default(10 * SECOND)
    .meta(doc('on SIGTERM, how long running jobs may finish before they are released')),
  SSE_KEEPALIVE_MS: int(100)
    .default(15 * SECOND)
    .meta(
      doc(
        'keep-alive comment interval on open streams; an A2A blocking send still waiting writes a space as often',
      ),
    ),
  PUSH_ALLOW: z
    .string()
    .default('')
    .meta(
      doc(
        'comma-separated CIDRs, IPs and host names webhooks may reach besides public addresses',
        undefined,
        'list',
      ),
    ),
  PUSH_ALLOW_PUBLIC: z
    .enum(['true', 'false'])
    .default('true')
    .meta(doc('`false`: webhooks may reach only `PUSH_ALLOW`')),
  PUSH_TIMEOUT_MS: int(100)
    .default(10 * SECOND)
    .meta(doc('one delivery attempt, connect to response')),
  PUSH_RETRY_MS: int(10).default(SECOND).meta(doc('first retry delay; doubles per attempt, with jitter')),
  PUSH_RETRY_MAX_MS: int(10)
    .default(10 * MINUTE)
    .meta(doc('longest delay between two attempts')),
  PUSH_MAX_AGE_MS: int(SECOND)
    .default(DAY)
    .meta(doc('a notification still undelivered this long after its event is dead-lettered')),
  PUSH_DNS_MAX_ATTEMPTS: int(1, 1000)
    .default(5)
    .meta(doc('attempts to a webhook whose host name does not resolve before it is dead-lettered')),
  PUSH_CONCURRENCY: int(1, 10_000)
    .default(32)
    .meta(doc('deliveries in flight at once (per webhook, always one at a time)')),
  PUSH_POLL_MS: int(10).default(SECOND).meta(doc('how often due retries are looked for')),
  KEYS_DIR: z
    .string()
    .min(1)
    .optional()
    .meta(
      doc(
        'the webhook signing keys, and the agent card keys in its `card/` (PostgreSQL: `./data/keys`; the same for every instance)',
        '`keys/` beside the SQLite file',
      ),
    ),
  CARD_SIGNING: z
    .enum(['true', 'false'])
    .default('true')
    .meta(doc('`false`: serve the agent card unsigned (no `signatures`, no card JWKS)')),
  CARD_SIGNING_KEY_FILE: z
    .string()
    .min(1)
    .optional()
    .meta(
      doc(
        'your own card signing key: a PEM private key, a private JWK, or a JWK Set (each key signs); reread when it changes',
        'unset: ES256 keys generated in `KEYS_DIR/card/`',
      ),
    ),
  CARD_KEY_OVERLAP_MS: int(SECOND)
    .default(DAY)
    .meta(
      doc(
        'after `taskhandle keys rotate --card`, the old card key stays published and goes on signing this long',
      ),
    ),
  API_KEYS_FILE: z
    .string()
    .min(1)
    .optional()
    .meta(doc('API keys (hashed): JSON array of `{principal, tenant, keyHash, label}`')),
  JWT_JWKS_URL: z
    .url({ protocol: /^https?$/, message: 'must be an http(s) URL' })
    .optional()
    .meta(doc('where the JWT issuer publishes its keys (or `JWT_JWKS_FILE`)')),
  JWT_JWKS_FILE: z
    .string()
    .min(1)
    .optional()
    .meta(doc('a local JWKS file (instead of `JWT_JWKS_URL`), reread when it changes')),
  JWT_ISSUER: z.string().min(1).optional().meta(doc('required `iss` of bearer JWTs (required with a JWKS)')),
  JWT_AUDIENCE: z
    .string()
    .min(1)
    .optional()
    .meta(doc('required `aud` of bearer JWTs (required with a JWKS)')),
  JWT_TENANT_CLAIM: z.string().min(1).default('tenant').meta(doc("JWT claim naming the caller's tenant")),
  JWT_PRINCIPAL_CLAIM: z.string().min(1).default('sub').meta(doc('JWT claim naming the caller')),
  JWT_SKILLS_CLAIM: z
    .string()
    .min(1)
    .optional()
    .meta(doc('JWT claim listing the skills the caller may use (absent claim: every skill)')),
  JWT_ROLES_CLAIM: z
    .string()
    .min(1)
    .optional()
    .meta(
      doc("JWT claim holding the caller's roles (a string or a list), for `OPERATORS` entries `role:NAME`"),
    ),
  // Its entries are checked by their owner, auth/operators.ts.
  OPERATORS: z
    .string()
    .default('')
    .meta(
      doc(
        'operators of `/console`: `tenant/principal`, `jwt:tenant/principal`, `role:NAME` (comma-separated)',
        'none',
        'list',
      ),
    ),
  // Its entries are checked by their owner, auth/operators.ts (the same forms as OPERATORS).
  WORKERS: z
    .string()
    .default('')
    .meta(
      doc(
        "principals that may claim and work remote skills' tasks at `/v1/workers` (docs/workers.md): `tenant/principal`, `jwt:tenant/principal`, `role:NAME` (comma-separated)",
        'none',
        'list',
      ),
    ),
  ALLOW_ANONYMOUS: z
    .enum(['true', 'false'])
    .default('false')
    .meta(doc('`true`: serve anonymous callers on a non-loopback `HOST`')),
  ANONYMOUS_MAX_TTL_MS: int(1000).default(DAY).meta(doc('retention cap when callers are anonymous')),
  ALLOWED_HOSTS: z
    .string()
    .default('')
    .meta(
      doc(
        'host names an anonymous server answers to besides loopback names, IP addresses and the `PUBLIC_URL` host (comma-separated); a request naming another in `Host` or `Origin` gets 403 (DNS rebinding)',
        undefined,
        'list',
      ),
    ),
  MCP_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .refine(
      (list) => list.split(',').every((o) => o.trim() === '' || /^https?:\/\/[^/\s]+\/?$/.test(o.trim())),
      {
        message: 'each entry must be an origin: scheme and host, e.g. http://localhost:6274',
      },
    )
    .meta(
      doc(
        'browser origins besides its own and loopback that may call `/mcp` (comma-separated, e.g. `http://localhost:6274`); others get 403',
        undefined,
        'list',
      ),
    ),
  EXTENDED_SKILLS: z
    .string()
    .default('')
    .meta(doc('skills shown only in the extended card (comma-separated ids)', undefined, 'list')),
  COMMANDS_FILE: z
    .string()
    .min(1)
    .optional()
    .meta(doc("the `command` skill's allow-list (the skill exists only when this is set)")),
  // Under the runner's 2 s after-abort wait at shutdown: a command ignoring SIGTERM is still killed in time.
  COMMAND_MAX_RUNNING: int(0)
    .default(0)
    .meta(doc('`command` jobs run at once, cluster-wide (`0`: no limit but the runner slots)')),
  COMMAND_KILL_GRACE_MS: int(0)
    .default(1500)
    .meta(doc("after SIGTERM, how long a canceled command's process group has before SIGKILL")),
  RATE_LIMIT_PER_S: int(0)
    .default(0)
    .meta(
      doc('requests per second per principal (anonymous: per client address); over it: 429', '`0` (off)'),
    ),
  RATE_LIMIT_BURST: int(1)
    .optional()
    .meta(doc('requests a principal may send at once before the rate applies', '`2 × RATE_LIMIT_PER_S`')),
  MAX_ACTIVE_TASKS: int(0)
    .default(10_000)
    .meta(doc('unfinished tasks a principal may have at once (`0`: no limit)')),
  MAX_STREAMS: int(0)
    .default(100)
    .meta(
      doc(
        'task streams (SSE and gRPC) one principal may have open at once on an instance (`0`: no limit); one more is refused (429)',
      ),
    ),
  MAX_METADATA_BYTES: int(0)
    .default(16_384)
    .meta(
      doc(
        "bytes (as JSON) of the metadata a task is created with (`0`: no limit); it is kept in the task's record, which every poll reads",
      ),
    ),
  MAX_PUSH_CONFIGS: int(1, 1000)
    .default(10)
    .meta(doc('push notification configs (webhooks) one task may have; a new one past it is refused')),
  MAX_ACTIVE_PUSH_CONFIGS: int(0)
    .default(1000)
    .meta(
      doc(
        "push notification configs (webhooks) one principal's unfinished tasks may have, all together (`0`: no limit); a new one past it is refused",
      ),
    ),
  MAX_WAITING_CLAIMS: int(1)
    .default(1000)
    .meta(
      doc(
        "remote workers' claims one principal may have waiting at once (long polls); more are refused (429)",
      ),
    ),
  MAX_MESSAGE_PARTS: int(1)
    .default(100)
    .meta(doc('parts one message may have; more are refused (InvalidParams)')),
  MAX_HISTORY_MESSAGES: int(1)
    .default(1000)
    .meta(doc("messages a task's history may hold; a message past it is refused: start a new task")),
  MAX_HISTORY_BYTES: int(1024)
    .default(4 * 2 ** 20)
    .meta(doc("bytes of a task's messages (as JSON); a message past it is refused")),
  MAX_ARTIFACT_BYTES: int(1)
    .default(100 * 2 ** 20)
    .meta(doc('bytes one artifact may hold (per run of its skill)')),
  INLINE_ARTIFACT_BYTES: int(0, 16 * 2 ** 20)
    .default(64 * 2 ** 10)
    .meta(doc('larger artifacts are stored beside the log and shown by reference (a download URL)')),
  MAX_STORED_BYTES: int(0)
    .default(10 * 2 ** 30)
    .meta(doc('artifact bytes a principal may have stored over all its tasks (`0`: no quota)')),
  TASK_CACHE_BYTES: int(0)
    .default(64 * 2 ** 20)
    .meta(doc('memory for rendered GetTask answers of unchanged tasks')),
  METRICS_PORT: int(0, 65_535)
    .optional()
    .meta(
      doc(
        'Prometheus: a listener on `HOST` for `GET /metrics` only (docs/metrics.md); a non-loopback `HOST` needs `METRICS_TOKEN`',
        'unset: no listener',
      ),
    ),
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,}$/, 'must be at least 16 printable characters, without spaces')
    .optional()
    .meta(
      doc(
        'Prometheus: the bearer token `/metrics` requires; set, the metrics are also served on `PORT` (docs/metrics.md)',
        'unset: off (or `METRICS_PORT`)',
      ),
    ),
});

/** A comma-separated setting's entries, trimmed, empty ones left out (`'a, b,'` -> `['a', 'b']`). */
export const listOf = (setting: string): string[] =>
  setting
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The settings' schema, for docs/settings.md's table (config/table.ts). */
export const SETTINGS = Env;

export type Config = z.infer<typeof Env> & {
  database: DatabaseConfig;
  /** Where the webhook signing keys live: KEYS_DIR, else `keys/` beside the SQLite file. */
  keysDir: string;
  /**
   * A setting as the operator gave it, for an error message: `BUILTIN_SKILLS=exprt` from the
   * environment, `builtinSkills=["exprt"]` from createServer's options.
   */
  given(setting: keyof z.infer<typeof Env>): string;
};

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | { kind: 'postgres'; url: string; schema: string; poolMax: number };

/**
 * The settings, validated: `env` holds them as the environment spells them; `given` says which of
 * them came from createServer's options, so that an error line names the option the caller wrote.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  given: ReadonlyMap<string, { shown: string }> = new Map(),
): Config {
  const parsed = Env.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const setting = String(i.path[0]);
      return `  ${given.get(setting)?.shown ?? `${setting}=${JSON.stringify(env[setting])}`}: ${i.message}`;
    });
    throw new ConfigError(`Invalid settings:\n${lines.join('\n')}`);
  }
  const givenAs = (setting: keyof z.infer<typeof Env>): string => {
    const shown = given.get(setting)?.shown;
    if (shown !== undefined) return shown;
    const value = String(parsed.data[setting] ?? '');
    return `${setting}=${setting === 'DATABASE_URL' ? redactUrl(value) : value}`;
  };
  const database = parseDatabaseUrl(parsed.data, givenAs('DATABASE_URL'));
  checkJwtSettings(parsed.data);
  if ((parsed.data.GRPC_TLS_CERT_FILE === undefined) !== (parsed.data.GRPC_TLS_KEY_FILE === undefined))
    throw new ConfigError('GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE: set both (TLS) or neither (plaintext)');
  const beside =
    database.kind === 'sqlite' && database.path !== ':memory:' ? dirname(database.path) : './data';
  return {
    ...parsed.data,
    database,
    keysDir: parsed.data.KEYS_DIR ?? join(beside, 'keys'),
    given: givenAs,
  };
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
function parseDatabaseUrl(e: z.infer<typeof Env>, named: string): DatabaseConfig {
  const url = e.DATABASE_URL;
  const match = /^(?:sqlite|file):(?:\/\/)?(.+)$/.exec(url);
  if (match?.[1]) return { kind: 'sqlite', path: match[1] };
  if (/^postgres(ql)?:\/\//.test(url)) {
    if (!URL.canParse(url)) throw new ConfigError(`${named}: not a valid URL`);
    return { kind: 'postgres', url, schema: e.DATABASE_SCHEMA, poolMax: e.DATABASE_POOL_MAX };
  }
  throw new ConfigError(
    `${named}: expected sqlite:<path> (for example sqlite:./data/taskhandle.db) or postgres://user@host:5432/database`,
  );
}

/** `url` with its password masked (`postgres://u:***@host/db`), for messages and logs. */
export function redactUrl(url: string): string {
  if (!URL.canParse(url)) return url.replace(/:[^:@/]*@/, ':***@');
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
  return parsed.href;
}
