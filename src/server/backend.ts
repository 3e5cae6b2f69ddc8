import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import { type AuthSettings, isLoopback, openAuthenticator } from '../auth/open.js';
import { operatorsOf } from '../auth/operators.js';
import { LOCAL_OPERATOR, operatorNamesOf, tenantOf } from '../auth/principal.js';
import { RateLimiter } from '../auth/rate-limiter.js';
import { ConfigError } from '../config/error.js';
import { type Config, listOf } from '../config/settings.js';
import { composeEngine } from '../engine/compose.js';
import type { Engine } from '../engine/engine.js';
import type { ClaimPolicy } from '../engine/fair-share.js';
import { anonymousTaskId } from '../engine/ids.js';
import type { Journal } from '../engine/journal.js';
import { SkillRegistry } from '../engine/registry.js';
import { RemoteRuns } from '../engine/remote-runs.js';
import { Sweeper } from '../engine/retention.js';
import { Runner } from '../engine/runner.js';
import type { AnySkill } from '../engine/skill.js';
import type { TaskStore } from '../engine/store-port.js';
import { admission, type FaceOptions } from '../faces/http/admission.js';
import { artifactPath } from '../faces/jobs/document.js';
import type { Metrics } from '../metrics/metrics.js';
import { type AddressPolicy, parseAllowList } from '../push/address-policy.js';
import { SecretBox } from '../push/secret-box.js';
import type { SkillSource } from '../skills/modules.js';
import { openStore } from '../store/open.js';
import { FACE_PATHS } from './face-paths.js';

/** What serves tasks whatever the protocol: settings checked, the store open, the engine built. */
export interface Backend {
  skills: SkillRegistry;
  /** Where each skill came from (built-in, a module, createServer), as the startup line says. */
  skillSources: readonly SkillSource[];
  /** Skills shown only on the extended agent card. */
  extendedSkills: Set<string>;
  authenticator: Authenticator;
  admit: FaceOptions['admit'];
  secrets: SecretBox;
  /** MCP_ALLOWED_ORIGINS, as `URL.origin`s: browser pages of other sites that may call. */
  allowedOrigins: ReadonlySet<string>;
  /** PUSH_ALLOW and PUSH_ALLOW_PUBLIC: the addresses webhooks may reach. */
  pushPolicy: AddressPolicy;
  store: TaskStore;
  engine: Engine;
  /** The engine's write log: the runner writes through it, and it says when webhooks are queued. */
  journal: Journal;
  runner: Runner;
  /** Runs of remote skills on workers: their claims and writes (faces/workers). */
  remoteRuns: RemoteRuns;
  /** The machine's user may work without a credential (anonymous server on loopback). */
  localWorker: boolean;
  sweeper: Sweeper;
  /** Prometheus metrics, when the settings turn them on (METRICS_TOKEN, METRICS_PORT). */
  metrics?: Metrics;
  /** Tells the engine the base URL artifact links start with, once the server listens. */
  setBaseUrl(url: string): void;
  /** The base URL callers reach the server at (empty until it listens). */
  baseUrl(): string;
}

/**
 * Checks every setting, then opens the store (last: a refused start leaves no connection or lock
 * behind) and builds the engine, its runner and its sweeper, not yet started.
 */
export async function buildBackend(
  config: Config,
  offered: readonly SkillSource[],
  logger: Logger,
  mode: { mounted: boolean },
): Promise<Backend> {
  const skillList = offered.map((s) => s.skill);
  if (config.DEFAULT_SKILL !== undefined && !skillList.some((s) => s.id === config.DEFAULT_SKILL)) {
    const ids = skillList.map((s) => s.id).join(', ');
    throw new ConfigError(`${config.given('DEFAULT_SKILL')}: not a skill of this server (${ids})`);
  }
  const skills = registryOf(skillList, config);
  const extendedSkills = new Set(listOf(config.EXTENDED_SKILLS));
  for (const id of extendedSkills) {
    if (!skills.get(id)) throw new ConfigError(`${config.given('EXTENDED_SKILLS')}: no skill "${id}"`);
  }
  const authenticator = openAuthenticator(authSettingsOf(config, mode.mounted), (message) =>
    logger.error({ file: config.API_KEYS_FILE }, message),
  );
  const operators = settingOf(config, 'OPERATORS', operatorsOf);
  const workers = settingOf(config, 'WORKERS', operatorsOf);
  const pushPolicy = settingOf(config, 'PUSH_ALLOW', (allow) =>
    parseAllowList(allow, config.PUSH_ALLOW_PUBLIC === 'true'),
  );
  const limiter =
    config.RATE_LIMIT_PER_S > 0
      ? new RateLimiter(config.RATE_LIMIT_PER_S, config.RATE_LIMIT_BURST ?? 2 * config.RATE_LIMIT_PER_S)
      : undefined;
  // Loaded only when on: off, not even the metrics library is loaded.
  const faces = {
    a2aRest: FACE_PATHS.a2aRest,
    jobs: '/v1/',
    workers: '/v1/workers/',
    inbox: FACE_PATHS.inbox,
    mcp: FACE_PATHS.mcp,
  };
  const metrics = metricsOn(config)
    ? (await import('../metrics/metrics.js')).openMetrics(
        { host: config.HOST, port: config.METRICS_PORT, token: config.METRICS_TOKEN },
        faces,
      )
    : undefined;
  let baseUrl = '';
  const allowedOrigins = new Set(listOf(config.MCP_ALLOWED_ORIGINS).map((o) => new URL(o).origin));
  const hosts = {
    baseUrl: () => baseUrl,
    hosts: new Set(listOf(config.ALLOWED_HOSTS).map((h) => h.toLowerCase())),
    origins: allowedOrigins,
  };
  const admit = markingWorkers(admission(authenticator, limiter, metrics?.http.refused, hosts), workers);
  const secrets = await SecretBox.open(config.keysDir, logger).catch((err: Error) => {
    throw new ConfigError(`KEYS_DIR=${config.keysDir}: cannot use the webhook secrets key (${err.message})`);
  });
  const store = await openStore(config.database, { synchronous: config.SQLITE_SYNCHRONOUS }, logger).catch(
    (err: Error & { code?: string }) => {
      throw storeRefusal(config, err);
    },
  );
  const { journal, engine } = composeEngine({
    store,
    observer: metrics?.engine,
    skills,
    // Anonymous callers reach a task by its id alone: fully random ids, and a shorter life.
    maxTtlMs: authenticator.anonymous
      ? Math.min(config.MAX_TTL_MS, config.ANONYMOUS_MAX_TTL_MS)
      : config.MAX_TTL_MS,
    newTaskId: authenticator.anonymous ? anonymousTaskId : undefined,
    cancelGraceMs: config.CANCEL_GRACE_MS,
    maxActiveTasks: config.MAX_ACTIVE_TASKS,
    tenantOf,
    priorities: { max: config.MAX_PRIORITY, stepMs: config.PRIORITY_STEP_MS },
    claimPolicy: claimPolicy(config, skills.all()),
    // An anonymous server on loopback serves its machine's user alone, who already owns every task
    // (mounted in an app of the user's, where it is reachable from is not known).
    operators: new Set([
      ...operators,
      ...(authenticator.anonymous && !mode.mounted && isLoopback(config.HOST) ? [LOCAL_OPERATOR] : []),
    ]),
    limits: {
      maxMessageParts: config.MAX_MESSAGE_PARTS,
      maxMetadataBytes: config.MAX_METADATA_BYTES,
      maxHistoryMessages: config.MAX_HISTORY_MESSAGES,
      maxHistoryBytes: config.MAX_HISTORY_BYTES,
      maxArtifactBytes: config.MAX_ARTIFACT_BYTES,
      inlineArtifactBytes: config.INLINE_ARTIFACT_BYTES,
      maxStoredBytes: config.MAX_STORED_BYTES,
      maxPushConfigs: config.MAX_PUSH_CONFIGS,
      maxActivePushConfigs: config.MAX_ACTIVE_PUSH_CONFIGS,
      maxStreams: config.MAX_STREAMS,
    },
    // Absolute, as callers of every face fetch it; the base is known once the server listens.
    artifactUrl: (taskId, artifactId) => `${baseUrl}${artifactPath(taskId, artifactId)}`,
  });
  const runner = new Runner({
    engine,
    journal,
    workerId: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    concurrency: config.RUNNER_CONCURRENCY,
    leaseMs: config.LEASE_MS,
    pollMs: config.RUNNER_POLL_MS,
    maxInterruptions: config.MAX_INTERRUPTIONS,
    logger,
  });
  const remoteRuns = new RemoteRuns({
    engine,
    journal,
    leaseMs: config.LEASE_MS,
    pollMs: config.RUNNER_POLL_MS,
    maxWaitingClaims: config.MAX_WAITING_CLAIMS,
    maxInterruptions: config.MAX_INTERRUPTIONS,
    logger,
  });
  const sweeper = new Sweeper({
    store,
    intervalMs: config.SWEEP_INTERVAL_MS,
    batch: 500,
    clock: engine.now,
    logger,
  });
  metrics?.watch({
    store,
    activeJobs: () => runner.activeJobs,
    waitingClaims: () => remoteRuns.waitingBySkill(),
    clock: engine.now,
    failed: (err) => logger.warn({ err }, 'metrics: reading the store failed'),
  });
  const setBaseUrl = (url: string) => {
    baseUrl = url;
  };
  return {
    skills,
    skillSources: offered,
    extendedSkills,
    authenticator,
    admit,
    secrets,
    allowedOrigins,
    pushPolicy,
    store,
    engine,
    journal,
    runner,
    remoteRuns,
    localWorker: authenticator.anonymous && !mode.mounted && isLoopback(config.HOST),
    sweeper,
    metrics,
    setBaseUrl,
    baseUrl: () => baseUrl,
  };
}

/** The settings of who may call, for auth/open.ts. */
export function authSettingsOf(config: Config, mounted: boolean): AuthSettings {
  const { JWT_ISSUER: issuer, JWT_AUDIENCE: audience } = config;
  return {
    apiKeysFile: config.API_KEYS_FILE,
    // loadConfig has checked that a key source comes with an issuer and an audience.
    jwt:
      issuer && audience
        ? {
            jwksUrl: config.JWT_JWKS_URL,
            jwksFile: config.JWT_JWKS_FILE,
            issuer,
            audience,
            tenantClaim: config.JWT_TENANT_CLAIM,
            principalClaim: config.JWT_PRINCIPAL_CLAIM,
            skillsClaim: config.JWT_SKILLS_CLAIM,
            rolesClaim: config.JWT_ROLES_CLAIM,
          }
        : undefined,
    host: config.HOST,
    allowAnonymous: config.ALLOW_ANONYMOUS === 'true',
    mounted,
  };
}

/** A setting its owner parses (auth, push): what the owner refuses stops the start, naming the setting. */
function settingOf<T>(
  config: Config,
  setting: 'OPERATORS' | 'WORKERS' | 'PUSH_ALLOW',
  parse: (value: string) => T,
): T {
  try {
    return parse(config[setting]);
  } catch (err) {
    throw new ConfigError(`${config.given(setting)}: ${(err as Error).message}`);
  }
}

/**
 * Admission that marks a worker's credential (WORKERS names it) as such: it works tasks at
 * /v1/workers and calls no skill over the caller faces (CallerPolicy.worker).
 */
function markingWorkers(admit: FaceOptions['admit'], workers: ReadonlySet<string>): FaceOptions['admit'] {
  if (workers.size === 0) return admit;
  return async (req) => {
    const admitted = await admit(req);
    if (!admitted.ok || !operatorNamesOf(admitted.principal).some((n) => workers.has(n))) return admitted;
    return { ok: true, principal: { ...admitted.principal, worker: true } };
  };
}

/** The registry of the offered skills; a skill it cannot take (its JSON Schema input) stops the start. */
function registryOf(skills: readonly AnySkill[], config: Config): SkillRegistry {
  try {
    return new SkillRegistry(skills, config.DEFAULT_SKILL);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}

/** Whether the settings turn metrics on: a bearer token for /metrics, or a listener of their own. */
const metricsOn = (config: Config): boolean =>
  config.METRICS_TOKEN !== undefined || config.METRICS_PORT !== undefined;

/** The limits of running jobs: each skill's own, and the settings'. */
function claimPolicy(config: Config, skills: readonly AnySkill[]): ClaimPolicy {
  const skillLimits: Record<string, number> = {};
  for (const s of skills) if (s.concurrency !== undefined) skillLimits[s.id] = s.concurrency;
  return {
    skillLimits,
    tenantLimit: config.TENANT_MAX_RUNNING || undefined,
    globalLimit: config.MAX_RUNNING || undefined,
  };
}

/** Why the store did not open, in words that say what to do. */
function storeRefusal(config: Config, err: Error & { code?: string; pid?: number }): ConfigError {
  if (err.code === 'database-in-use')
    return new ConfigError(
      `${config.given('DATABASE_URL')}: the database is in use by another taskhandle server` +
        `${err.pid === undefined ? '' : ` (pid ${err.pid})`}. A SQLite database serves one server at a time: ` +
        'stop the other one, or give this one a file of its own (DATABASE_URL=sqlite:./data/other.db). ' +
        'To run several servers on the same tasks, use PostgreSQL (DATABASE_URL=postgres://user@host:5432/db).',
    );
  return new ConfigError(`${config.given('DATABASE_URL')}: cannot open the store (${err.message})`);
}
