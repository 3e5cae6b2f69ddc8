// Written by `npm run docs:settings` from src/config/settings.ts (config/options-source.ts); do not edit.

/** Where the tasks are kept: a SQLite file (the embedded default), or PostgreSQL for several instances. */
export type DatabaseUrl =
  | `sqlite:${string}`
  | `file:${string}`
  | `postgres://${string}`
  | `postgresql://${string}`;

/**
 * Every setting of docs/settings.md, as an option of `createServer`: its name in camelCase
 * (`MAX_BODY_BYTES` -> `maxBodyBytes`; `DATABASE_URL` -> `database`, `SKILLS` -> `skillModules`),
 * its value typed (numbers, booleans, arrays for comma-separated lists). An option left out is
 * read from the environment, else the setting's default. Validated as the environment is.
 */
export interface Settings {
  /**
   * TCP port (`0`: any free port). Setting `PORT`; default `41241`.
   */
  port?: number;
  /**
   * interface to listen on. Setting `HOST`; default `127.0.0.1`.
   */
  host?: string;
  /**
   * base URL written into the agent card (set it behind a proxy). Setting `PUBLIC_URL`; default
   * `http://HOST:PORT`.
   */
  publicUrl?: string;
  /**
   * TCP port of the A2A gRPC binding, on `HOST` (`0`: any free port). Setting `GRPC_PORT`; default
   * unset: no gRPC.
   */
  grpcPort?: number;
  /**
   * gRPC over TLS: the certificate chain (PEM); set with `GRPC_TLS_KEY_FILE`. Setting
   * `GRPC_TLS_CERT_FILE`; default (none).
   */
  grpcTlsCertFile?: string;
  /**
   * gRPC over TLS: the certificate's private key (PEM). Setting `GRPC_TLS_KEY_FILE`; default (none).
   */
  grpcTlsKeyFile?: string;
  /**
   * `true`: serve gRPC without TLS on a non-loopback `HOST` (behind a TLS-terminating proxy). Setting
   * `GRPC_ALLOW_PLAINTEXT`; default `false`.
   */
  grpcAllowPlaintext?: boolean;
  /**
   * the store: `sqlite:<path>` (or `file:<path>`), or `postgres://...` for several instances. Setting
   * `DATABASE_URL`; default `sqlite:./data/taskhandle.db`.
   */
  database?: DatabaseUrl;
  /**
   * PostgreSQL: the schema of the tables (lower-case letters, digits, `_`). Setting `DATABASE_SCHEMA`;
   * default `public`.
   */
  databaseSchema?: string;
  /**
   * PostgreSQL: connections of this instance. Setting `DATABASE_POOL_MAX`; default `10`.
   */
  databasePoolMax?: number;
  /**
   * `full` survives power loss; `normal` survives process crashes only, and is faster. Setting
   * `SQLITE_SYNCHRONOUS`; default `full`.
   */
  sqliteSynchronous?: 'full' | 'normal';
  /**
   * pino level: `fatal` `error` `warn` `info` `debug` `trace` `silent`. Setting `LOG_LEVEL`; default
   * `info`.
   */
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * the card template (name, description, version, provider, modes). Setting `AGENT_CARD_FILE`; default
   * `./agent-card.json` of the package.
   */
  agentCardFile?: string;
  /**
   * skill modules to serve: ES module files whose exports are skills (comma-separated paths;
   * docs/skills.md). Setting `SKILLS`; default none.
   */
  skillModules?: readonly string[];
  /**
   * the built-in skills offered: `all`, `none`, or their ids (comma-separated). Setting
   * `BUILTIN_SKILLS`; default `all`.
   */
  builtinSkills?: boolean | readonly string[];
  /**
   * skill for messages that name none (unset: such a message is refused, listing the skills). Setting
   * `DEFAULT_SKILL`; default (none).
   */
  defaultSkill?: string;
  /**
   * larger request bodies (on any method) are refused with 413. Setting `MAX_BODY_BYTES`; default
   * `1048576` (1 MiB).
   */
  maxBodyBytes?: number;
  /**
   * request bodies whose JSON nests objects and arrays deeper are refused (InvalidRequest, 400). Setting
   * `MAX_JSON_DEPTH`; default `64`.
   */
  maxJsonDepth?: number;
  /**
   * a blocking call answers with the task as it stands after this long: an A2A blocking send (its status
   * message says so) and a `tools/call` of an MCP client that takes JSON only. Setting
   * `BLOCKING_TIMEOUT_MS`; default A2A `290000`, MCP `30000`.
   */
  blockingTimeoutMs?: number;
  /**
   * how long a canceled job may take to stop before the task is marked canceled anyway. Setting
   * `CANCEL_GRACE_MS`; default `5000`.
   */
  cancelGraceMs?: number;
  /**
   * cap on every skill's retention. Setting `MAX_TTL_MS`; default `2592000000` (30 days).
   */
  maxTtlMs?: number;
  /**
   * jobs run at once by this process. Setting `RUNNER_CONCURRENCY`; default `16`.
   */
  runnerConcurrency?: number;
  /**
   * jobs run at once in the whole cluster (every instance on the store; `0`: only `RUNNER_CONCURRENCY`
   * each). Setting `MAX_RUNNING`; default `0`.
   */
  maxRunning?: number;
  /**
   * jobs of one tenant run at once, cluster-wide (`0`: no limit but the fair share); the others wait
   * queued. Setting `TENANT_MAX_RUNNING`; default `0`.
   */
  tenantMaxRunning?: number;
  /**
   * a caller's `priority` lies from minus this to this (`0`: callers may not set one). Setting
   * `MAX_PRIORITY`; default `10`.
   */
  maxPriority?: number;
  /**
   * each step of priority runs a task this much earlier in its owner's queue (and no earlier). Setting
   * `PRIORITY_STEP_MS`; default `60000` (1 min).
   */
  priorityStepMs?: number;
  /**
   * a job's lease; a task whose runner stops renewing it is taken over after this long. Setting
   * `LEASE_MS`; default `30000`.
   */
  leaseMs?: number;
  /**
   * how often the runner looks for runnable tasks besides wake-ups on submit. Setting `RUNNER_POLL_MS`;
   * default `1000`.
   */
  runnerPollMs?: number;
  /**
   * a task whose runner died (crash, `kill -9`) more often than this is failed instead of re-run.
   * Setting `MAX_INTERRUPTIONS`; default `3`.
   */
  maxInterruptions?: number;
  /**
   * how often expired tasks are deleted. Setting `SWEEP_INTERVAL_MS`; default `60000` (1 min).
   */
  sweepIntervalMs?: number;
  /**
   * on SIGTERM, how long running jobs may finish before they are released. Setting
   * `SHUTDOWN_TIMEOUT_MS`; default `10000`.
   */
  shutdownTimeoutMs?: number;
  /**
   * keep-alive comment interval on open streams; an A2A blocking send still waiting writes a space as
   * often. Setting `SSE_KEEPALIVE_MS`; default `15000`.
   */
  sseKeepaliveMs?: number;
  /**
   * comma-separated CIDRs, IPs and host names webhooks may reach besides public addresses. Setting
   * `PUSH_ALLOW`; default (empty).
   */
  pushAllow?: readonly string[];
  /**
   * `false`: webhooks may reach only `PUSH_ALLOW`. Setting `PUSH_ALLOW_PUBLIC`; default `true`.
   */
  pushAllowPublic?: boolean;
  /**
   * one delivery attempt, connect to response. Setting `PUSH_TIMEOUT_MS`; default `10000`.
   */
  pushTimeoutMs?: number;
  /**
   * first retry delay; doubles per attempt, with jitter. Setting `PUSH_RETRY_MS`; default `1000`.
   */
  pushRetryMs?: number;
  /**
   * longest delay between two attempts. Setting `PUSH_RETRY_MAX_MS`; default `600000` (10 min).
   */
  pushRetryMaxMs?: number;
  /**
   * a notification still undelivered this long after its event is dead-lettered. Setting
   * `PUSH_MAX_AGE_MS`; default `86400000` (24 h).
   */
  pushMaxAgeMs?: number;
  /**
   * attempts to a webhook whose host name does not resolve before it is dead-lettered. Setting
   * `PUSH_DNS_MAX_ATTEMPTS`; default `5`.
   */
  pushDnsMaxAttempts?: number;
  /**
   * deliveries in flight at once (per webhook, always one at a time). Setting `PUSH_CONCURRENCY`;
   * default `32`.
   */
  pushConcurrency?: number;
  /**
   * how often due retries are looked for. Setting `PUSH_POLL_MS`; default `1000`.
   */
  pushPollMs?: number;
  /**
   * the webhook signing keys, and the agent card keys in its `card/` (PostgreSQL: `./data/keys`; the
   * same for every instance). Setting `KEYS_DIR`; default `keys/` beside the SQLite file.
   */
  keysDir?: string;
  /**
   * `false`: serve the agent card unsigned (no `signatures`, no card JWKS). Setting `CARD_SIGNING`;
   * default `true`.
   */
  cardSigning?: boolean;
  /**
   * your own card signing key: a PEM private key, a private JWK, or a JWK Set (each key signs); reread
   * when it changes. Setting `CARD_SIGNING_KEY_FILE`; default unset: ES256 keys generated in
   * `KEYS_DIR/card/`.
   */
  cardSigningKeyFile?: string;
  /**
   * after `taskhandle keys rotate --card`, the old card key stays published and goes on signing this
   * long. Setting `CARD_KEY_OVERLAP_MS`; default `86400000` (24 h).
   */
  cardKeyOverlapMs?: number;
  /**
   * API keys (hashed): JSON array of `{principal, tenant, keyHash, label}`. Setting `API_KEYS_FILE`;
   * default (none).
   */
  apiKeysFile?: string;
  /**
   * where the JWT issuer publishes its keys (or `JWT_JWKS_FILE`). Setting `JWT_JWKS_URL`; default
   * (none).
   */
  jwtJwksUrl?: string;
  /**
   * a local JWKS file (instead of `JWT_JWKS_URL`), reread when it changes. Setting `JWT_JWKS_FILE`;
   * default (none).
   */
  jwtJwksFile?: string;
  /**
   * required `iss` of bearer JWTs (required with a JWKS). Setting `JWT_ISSUER`; default (none).
   */
  jwtIssuer?: string;
  /**
   * required `aud` of bearer JWTs (required with a JWKS). Setting `JWT_AUDIENCE`; default (none).
   */
  jwtAudience?: string;
  /**
   * JWT claim naming the caller's tenant. Setting `JWT_TENANT_CLAIM`; default `tenant`.
   */
  jwtTenantClaim?: string;
  /**
   * JWT claim naming the caller. Setting `JWT_PRINCIPAL_CLAIM`; default `sub`.
   */
  jwtPrincipalClaim?: string;
  /**
   * JWT claim listing the skills the caller may use (absent claim: every skill). Setting
   * `JWT_SKILLS_CLAIM`; default (none).
   */
  jwtSkillsClaim?: string;
  /**
   * JWT claim holding the caller's roles (a string or a list), for `OPERATORS` entries `role:NAME`.
   * Setting `JWT_ROLES_CLAIM`; default (none).
   */
  jwtRolesClaim?: string;
  /**
   * operators of `/console`: `tenant/principal`, `jwt:tenant/principal`, `role:NAME` (comma-separated).
   * Setting `OPERATORS`; default none.
   */
  operators?: readonly string[];
  /**
   * principals that may claim and work remote skills' tasks at `/v1/workers` (docs/workers.md):
   * `tenant/principal`, `jwt:tenant/principal`, `role:NAME` (comma-separated). Setting `WORKERS`;
   * default none.
   */
  workers?: readonly string[];
  /**
   * `true`: serve anonymous callers on a non-loopback `HOST`. Setting `ALLOW_ANONYMOUS`; default
   * `false`.
   */
  allowAnonymous?: boolean;
  /**
   * retention cap when callers are anonymous. Setting `ANONYMOUS_MAX_TTL_MS`; default `86400000` (24 h).
   */
  anonymousMaxTtlMs?: number;
  /**
   * host names an anonymous server answers to besides loopback names, IP addresses and the `PUBLIC_URL`
   * host (comma-separated); a request naming another in `Host` or `Origin` gets 403 (DNS rebinding).
   * Setting `ALLOWED_HOSTS`; default (empty).
   */
  allowedHosts?: readonly string[];
  /**
   * browser origins besides its own and loopback that may call `/mcp` (comma-separated, e.g.
   * `http://localhost:6274`); others get 403. Setting `MCP_ALLOWED_ORIGINS`; default (empty).
   */
  mcpAllowedOrigins?: readonly string[];
  /**
   * skills shown only in the extended card (comma-separated ids). Setting `EXTENDED_SKILLS`; default
   * (empty).
   */
  extendedSkills?: readonly string[];
  /**
   * the `command` skill's allow-list (the skill exists only when this is set). Setting `COMMANDS_FILE`;
   * default (none).
   */
  commandsFile?: string;
  /**
   * `command` jobs run at once, cluster-wide (`0`: no limit but the runner slots). Setting
   * `COMMAND_MAX_RUNNING`; default `0`.
   */
  commandMaxRunning?: number;
  /**
   * after SIGTERM, how long a canceled command's process group has before SIGKILL. Setting
   * `COMMAND_KILL_GRACE_MS`; default `1500`.
   */
  commandKillGraceMs?: number;
  /**
   * requests per second per principal (anonymous: per client address); over it: 429. Setting
   * `RATE_LIMIT_PER_S`; default `0` (off).
   */
  rateLimitPerS?: number;
  /**
   * requests a principal may send at once before the rate applies. Setting `RATE_LIMIT_BURST`; default
   * `2 × RATE_LIMIT_PER_S`.
   */
  rateLimitBurst?: number;
  /**
   * unfinished tasks a principal may have at once (`0`: no limit). Setting `MAX_ACTIVE_TASKS`; default
   * `10000`.
   */
  maxActiveTasks?: number;
  /**
   * task streams (SSE and gRPC) one principal may have open at once on an instance (`0`: no limit); one
   * more is refused (429). Setting `MAX_STREAMS`; default `100`.
   */
  maxStreams?: number;
  /**
   * bytes (as JSON) of the metadata a task is created with (`0`: no limit); it is kept in the task's
   * record, which every poll reads. Setting `MAX_METADATA_BYTES`; default `16384` (16 KiB).
   */
  maxMetadataBytes?: number;
  /**
   * push notification configs (webhooks) one task may have; a new one past it is refused. Setting
   * `MAX_PUSH_CONFIGS`; default `10`.
   */
  maxPushConfigs?: number;
  /**
   * push notification configs (webhooks) one principal's unfinished tasks may have, all together (`0`:
   * no limit); a new one past it is refused. Setting `MAX_ACTIVE_PUSH_CONFIGS`; default `1000`.
   */
  maxActivePushConfigs?: number;
  /**
   * remote workers' claims one principal may have waiting at once (long polls); more are refused (429).
   * Setting `MAX_WAITING_CLAIMS`; default `1000`.
   */
  maxWaitingClaims?: number;
  /**
   * parts one message may have; more are refused (InvalidParams). Setting `MAX_MESSAGE_PARTS`; default
   * `100`.
   */
  maxMessageParts?: number;
  /**
   * messages a task's history may hold; a message past it is refused: start a new task. Setting
   * `MAX_HISTORY_MESSAGES`; default `1000`.
   */
  maxHistoryMessages?: number;
  /**
   * bytes of a task's messages (as JSON); a message past it is refused. Setting `MAX_HISTORY_BYTES`;
   * default `4194304` (4 MiB).
   */
  maxHistoryBytes?: number;
  /**
   * bytes one artifact may hold (per run of its skill). Setting `MAX_ARTIFACT_BYTES`; default
   * `104857600` (100 MiB).
   */
  maxArtifactBytes?: number;
  /**
   * larger artifacts are stored beside the log and shown by reference (a download URL). Setting
   * `INLINE_ARTIFACT_BYTES`; default `65536` (64 KiB).
   */
  inlineArtifactBytes?: number;
  /**
   * artifact bytes a principal may have stored over all its tasks (`0`: no quota). Setting
   * `MAX_STORED_BYTES`; default `10737418240` (10 GiB).
   */
  maxStoredBytes?: number;
  /**
   * memory for rendered GetTask answers of unchanged tasks. Setting `TASK_CACHE_BYTES`; default
   * `67108864` (64 MiB).
   */
  taskCacheBytes?: number;
  /**
   * Prometheus: a listener on `HOST` for `GET /metrics` only (docs/metrics.md); a non-loopback `HOST`
   * needs `METRICS_TOKEN`. Setting `METRICS_PORT`; default unset: no listener.
   */
  metricsPort?: number;
  /**
   * Prometheus: the bearer token `/metrics` requires; set, the metrics are also served on `PORT`
   * (docs/metrics.md). Setting `METRICS_TOKEN`; default unset: off (or `METRICS_PORT`).
   */
  metricsToken?: string;
}
