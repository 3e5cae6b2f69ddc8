import { REST_PATH } from '../faces/a2a/agent-card.js';
import { CONSOLE_PATH } from '../faces/console/router.js';
import { INBOX_PATH } from '../faces/inbox/router.js';
import { MCP_PATH } from '../faces/mcp/router.js';

/**
 * Where each face is served: what the server mounts (server/http.ts), the `listening` log line
 * shows, and the metrics name a request's face by.
 */
export const FACE_PATHS = {
  a2aJsonRpc: '/',
  a2aRest: REST_PATH,
  jobs: '/v1/jobs',
  inbox: INBOX_PATH,
  console: CONSOLE_PATH,
  mcp: MCP_PATH,
  agentCard: '/.well-known/agent-card.json',
} as const;
