import type { Principal } from '../../auth/principal.js';
import { CODE, RpcRefusal } from './jsonrpc.js';
import { declaresFormElicitation } from './session.js';

/** The stateless revision the Tasks extension (SEP-2663) is written for: per-request `_meta`. */
export const STATELESS_VERSION = '2026-07-28';
/** Revisions with the `initialize` handshake; 2025-11-25 is the one with (experimental) tasks. */
export const HANDSHAKE_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const SUPPORTED_VERSIONS = [STATELESS_VERSION, ...HANDSHAKE_VERSIONS];

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/**
 * How a request speaks: `stateless` (2026-07-28: its version and capabilities in `_meta`, on every
 * request: whether they take the Tasks extension and form-mode elicitation) or `handshake`
 * (2025-11-25 and before: what `initialize` agreed, which this server does not keep: the session id
 * it gave carries what the client declared, see session.ts; each request stands alone either way).
 */
export type Revision =
  | { kind: 'stateless'; tasksExtension: boolean; formElicitation: boolean }
  | { kind: 'handshake' };

/** The revision a request speaks, from its `_meta` (refused: a stateless version we do not speak). */
export function revisionOf(params: Record<string, unknown> | undefined): Revision {
  const meta = params?._meta as Record<string, unknown> | undefined;
  const version = meta?.[META.protocolVersion];
  if (version === undefined) return { kind: 'handshake' };
  if (version !== STATELESS_VERSION) {
    throw new RpcRefusal(
      CODE.unsupportedProtocolVersion,
      `Unsupported protocol version ${JSON.stringify(version)}; use one of ${SUPPORTED_VERSIONS.join(', ')}`,
      { supported: SUPPORTED_VERSIONS, requested: version },
      400,
    );
  }
  const caps = meta?.[META.clientCapabilities];
  if (caps === undefined || typeof caps !== 'object' || caps === null) {
    throw new RpcRefusal(
      CODE.invalidParams,
      `Requests of protocol ${STATELESS_VERSION} carry _meta["${META.clientCapabilities}"] (an object, {} for none)`,
      undefined,
      400,
    );
  }
  const extensions = (caps as { extensions?: Record<string, unknown> }).extensions;
  return {
    kind: 'stateless',
    tasksExtension: extensions?.[TASKS_EXTENSION] !== undefined,
    formElicitation: declaresFormElicitation(caps),
  };
}

/** -32021: what the request asks for (`what`, "... are"/"runs as") needs the Tasks extension, not declared. */
export const missingTasksExtension = (what: string): RpcRefusal =>
  new RpcRefusal(
    CODE.missingClientCapability,
    `${what} part of the Tasks extension: declare the "${TASKS_EXTENSION}" extension in _meta["${META.clientCapabilities}"].extensions`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    400,
  );

/** -32021: the tool answers with a task only, and the client did not say it takes one. */
export const needsTasksExtension = (tool: string): RpcRefusal =>
  new RpcRefusal(
    CODE.missingClientCapability,
    `Tool "${tool}" runs as a task: declare the "${TASKS_EXTENSION}" extension in _meta["${META.clientCapabilities}"].extensions`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    400,
  );

export const serverInfo = (version: string) => ({ name: 'taskhandle', title: 'taskhandle', version });

/** What the server offers: tools, tasks (2025-11-25: list for identified callers only) and the extension. */
export function capabilities(revision: Revision, principal: Principal) {
  if (revision.kind === 'stateless') return { tools: {}, extensions: { [TASKS_EXTENSION]: {} } };
  return {
    tools: {},
    tasks: {
      ...(principal.via === 'anonymous' ? {} : { list: {} }),
      cancel: {},
      requests: { tools: { call: {} } },
    },
  };
}

/** `initialize` (handshake revisions): the client's version when we speak it, else our newest. */
export function initializeResult(
  params: Record<string, unknown> | undefined,
  principal: Principal,
  version: string,
) {
  const asked = params?.protocolVersion;
  const protocolVersion = HANDSHAKE_VERSIONS.find((v) => v === asked) ?? HANDSHAKE_VERSIONS[0];
  return {
    protocolVersion,
    capabilities: capabilities({ kind: 'handshake' }, principal),
    serverInfo: serverInfo(version),
    instructions: INSTRUCTIONS,
  };
}

/**
 * How long a client may keep a `server/discover` answer (2026-07-28 caching: servers MUST give
 * `ttlMs`): what it says changes only when the server is upgraded or its configuration changes,
 * which a restart does; the same for every caller, so `public`.
 */
export const DISCOVER_TTL_MS = 3_600_000;
/**
 * How long a client may keep a `tools/list` answer: the skills change only with a restart, but a
 * caller's share of them (an API key's or a token's skill list) may change sooner, so minutes, and
 * `private`: the list is filtered per caller, never to be shared across credentials.
 */
export const TOOLS_TTL_MS = 300_000;

/** `server/discover` (2026-07-28): a cacheable result, the same for every caller. */
export function discoverResult(principal: Principal, version: string) {
  return {
    resultType: 'complete',
    supportedVersions: SUPPORTED_VERSIONS,
    capabilities: capabilities(
      { kind: 'stateless', tasksExtension: true, formElicitation: false },
      principal,
    ),
    _meta: { [META.serverInfo]: serverInfo(version) },
    instructions: INSTRUCTIONS,
    ttlMs: DISCOVER_TTL_MS,
    cacheScope: 'public',
  };
}

/** `_meta` every stateless result carries. */
export const resultMeta = (version: string) => ({ [META.serverInfo]: serverInfo(version) });

const INSTRUCTIONS =
  'Each tool is a long-running job: call it as a task, poll tasks/get at the pollInterval it suggests ' +
  '(or, on protocol 2026-07-28, listen for its status with subscriptions/listen), ' +
  'then read the result (large files are links to download with the same credentials).';
