import type { Engine } from '../../engine/engine.js';
import type { Audit } from '../audit.js';
import type { FaceOptions } from '../http/admission.js';

/** What the MCP face is built with. */
export interface McpOptions extends FaceOptions {
  engine: Engine;
  audit: Audit;
  /** The server's version, as `serverInfo` shows it (the agent card's, known once the server listens). */
  version: () => string;
  /**
   * How long a plain `tools/call` from a client that takes no SSE is held open (BLOCKING_TIMEOUT_MS):
   * then it is told the task's id to poll. Over SSE the call is held until the task ends.
   */
  blockingTimeoutMs: number;
  /** This server's own origin as callers reach it (PUBLIC_URL, or the address it listens on). */
  baseUrl: () => string;
  /** Other browser origins that may call `/mcp` (MCP_ALLOWED_ORIGINS). */
  allowedOrigins: ReadonlySet<string>;
  /** Where the protected-resource metadata is (when JWTs are on): named in 401 challenges. */
  resourceMetadataUrl?: () => string | undefined;
}
