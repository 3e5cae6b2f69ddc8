import { expect } from 'vitest';
import type { Agent } from './harness.js';
import { openSse, type SseStream } from './sse.js';

/** Requests of MCP 2026-07-28 (per-request `_meta`, the standard headers), raw: no SDK speaks it yet. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
export type Json = Record<string, any>;

export interface ModernOptions {
  /** An API key (Bearer); none: anonymous. */
  key?: string;
  /** Declare the Tasks extension (default: yes). */
  tasks?: boolean;
  /** Declare form-mode elicitation (default: yes). */
  elicitation?: boolean;
  /** Headers on top of (or replacing) the standard ones. */
  headers?: Record<string, string>;
  /** `_meta` entries on top of the per-request fields (a condition of the generations extension, say). */
  meta?: Json;
}

/** 2026-07-28's per-request fields. */
export const modernMeta = (o: ModernOptions = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'spec-tests', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {
    ...((o.tasks ?? true) ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    ...((o.elicitation ?? true) ? { elicitation: { form: {} } } : {}),
  },
});

let nextId = 1;

function request(method: string, params: Json, o: ModernOptions) {
  const id = nextId++;
  const name = params.taskId ?? params.name;
  const init: RequestInit = {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(typeof name === 'string' ? { 'Mcp-Name': name } : {}),
      ...(o.key ? { Authorization: `Bearer ${o.key}` } : {}),
      ...o.headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: { ...params, _meta: { ...modernMeta(o), ...o.meta } },
    }),
  };
  return { id, init };
}

/** One request answered as JSON: the HTTP status and the JSON-RPC response (its id checked). */
export async function modern(
  agent: Agent,
  method: string,
  params: Json,
  o: ModernOptions = {},
): Promise<{ status: number; body: Json }> {
  const { id, init } = request(method, params, o);
  const res = await fetch(`${agent.url}/mcp`, init);
  const body = (await res.json()) as Json;
  expect(body.id).toBe(id);
  return { status: res.status, body };
}

/** `subscriptions/listen` with `notifications`: the open stream, and the request's id. */
export async function listen(
  agent: Agent,
  notifications: Json,
  o: ModernOptions = {},
): Promise<{ id: number; stream: SseStream }> {
  const { id, init } = request('subscriptions/listen', { notifications }, o);
  return { id, stream: await openSse(`${agent.url}/mcp`, init) };
}
