import { call } from './rpc.js';

/** MCP requests of the mcp scenario: the Tasks extension (SEP-2663), protocol 2026-07-28. */

export const MCP_PATH = '/mcp';
export const MCP_HEADERS = { Accept: 'application/json, text/event-stream' } as const;

const VERSION = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': VERSION,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

let nextId = 0;
const mcp = (method: string, params: object): string =>
  JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method, params: { ...params, _meta: META } });

/**
 * The standard headers of a 2026-07-28 request, which the server checks against its body
 * (MCP-Protocol-Version, Mcp-Method, Mcp-Name: the tool's name or the task id).
 */
export function mcpHeadersOf(body: string): Record<string, string> {
  const { method, params } = JSON.parse(body) as {
    method: string;
    params: { name?: string; taskId?: string };
  };
  const name = params.name ?? params.taskId;
  return {
    'MCP-Protocol-Version': VERSION,
    'Mcp-Method': method,
    ...(name === undefined ? {} : { 'Mcp-Name': name }),
  };
}

/** tools/call of an hour-long sleep, as SendMessage's LONG_JOB: each call a new task. */
export const mcpCreateBody = (): string => mcp('tools/call', { name: 'sleep', arguments: { seconds: 3600 } });

export const mcpGetBody = (taskId: string): string => mcp('tasks/get', { taskId });

/** tasks/get bodies cycling through `ids`. */
export function mcpRoundRobin(ids: readonly string[]): () => string {
  let i = 0;
  return () => mcpGetBody(ids[i++ % ids.length] as string);
}

/** Creates `count` tasks over MCP, 32 at a time; returns their ids. */
export async function createMcpTasks(url: string, count: number): Promise<string[]> {
  const ids: string[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const body = mcpCreateBody();
      const reply = await call(`${url}${MCP_PATH}`, body, { ...MCP_HEADERS, ...mcpHeadersOf(body) });
      const id = reply.result?.taskId;
      if (typeof id !== 'string') throw new Error(`tools/call returned no task: ${JSON.stringify(reply)}`);
      ids[i] = id;
    }
  };
  await Promise.all(Array.from({ length: Math.min(32, count) }, worker));
  return ids;
}
