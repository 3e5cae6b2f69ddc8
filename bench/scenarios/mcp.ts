import { type LoadResult, measure } from '../load.js';
import { createMcpTasks, MCP_HEADERS, MCP_PATH, mcpCreateBody, mcpHeadersOf, mcpRoundRobin } from '../mcp.js';
import { launch } from '../servers/launch.js';
import type { Load } from './create.js';

/**
 * The MCP face (SEP-2663 tools/call and tasks/get on /mcp) on taskhandle over SQLite: the same
 * work as the create and poll scenarios' A2A SendMessage and GetTask, measured in the same run.
 */
export async function mcp(load: Load, tasks: number): Promise<{ create: LoadResult; get: LoadResult }> {
  const o = { post: MCP_PATH, headers: MCP_HEADERS, headersOf: mcpHeadersOf };
  let server = await launch('taskhandle');
  let create: LoadResult;
  try {
    create = await measure(server, { ...load, ...o, body: mcpCreateBody });
  } finally {
    await server.stop();
  }
  server = await launch('taskhandle');
  try {
    const ids = await createMcpTasks(server.url, tasks);
    return { create, get: await measure(server, { ...load, ...o, body: mcpRoundRobin(ids) }) };
  } finally {
    await server.stop();
  }
}
