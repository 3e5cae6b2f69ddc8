import { call } from './rpc.js';

/** MCP requests of the mcp scenario: the Tasks extension (SEP-2663), protocol 2026-07-28. */

export const MCP_PATH = '/mcp';
export const MCP_HEADERS = { Accept: 'application/json, text/event-stream' } as const;

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
};

let nextId = 0;
const mcp = (method: string, params: object): string =>
  JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method, params: { ...params, _meta: META } });

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
      const reply = await call(`${url}${MCP_PATH}`, mcpCreateBody(), MCP_HEADERS);
      const id = reply.result?.taskId;
      if (typeof id !== 'string') throw new Error(`tools/call returned no task: ${JSON.stringify(reply)}`);
      ids[i] = id;
    }
  };
  await Promise.all(Array.from({ length: Math.min(32, count) }, worker));
  return ids;
}
