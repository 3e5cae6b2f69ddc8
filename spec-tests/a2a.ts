import { SendMessageRequest } from '@a2a-js/sdk';
import type { Agent } from './harness.js';
import { openSse, type SseStream } from './sse.js';

/** The handle extension's URI: every task's metadata carries the handle under it. */
export const HANDLE = 'https://taskhandle.dev/extensions/task-handle/v1';

export const V1 = { version: '1.0' } as const;

/** A v1.0 user message that picks a skill with a `{"skill", "input"}` data part. */
export function skillMessage(
  skill: string,
  input: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    parts: [{ data: { skill, input } }],
    ...extra,
  };
}

/** A v1.0 send request for a skill, decoded by the SDK's own codec (for the SDK's clients). */
export const skillRequest = (
  skill: string,
  input: Record<string, unknown>,
  configuration: Record<string, unknown> = {},
  message: Record<string, unknown> = {},
) => SendMessageRequest.fromJSON({ message: skillMessage(skill, input, message), configuration });

/** A v0.3 user message (kind-tagged parts, lower-case role). */
export function legacyMessage(parts: unknown[], extra: Record<string, unknown> = {}) {
  return { kind: 'message', messageId: crypto.randomUUID(), role: 'user', parts, ...extra };
}

/** v1.0 SendMessage; returns the JSON-RPC result (throws on a JSON-RPC error). */
// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
export async function send(agent: Agent, message: unknown, configuration?: unknown): Promise<any> {
  const { body } = await agent.rpc('SendMessage', { message, configuration }, V1);
  if (body.error) throw new Error(`SendMessage failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** Starts a job and returns its task at once (returnImmediately). */
// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
export async function startTask(agent: Agent, message: unknown): Promise<any> {
  return (await send(agent, message, { returnImmediately: true })).task;
}

/** v1.0 GetTask result (throws on a JSON-RPC error). */
// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
export async function getTask(agent: Agent, id: string, historyLength?: number): Promise<any> {
  const { body } = await agent.rpc('GetTask', { id, historyLength }, V1);
  if (body.error) throw new Error(`GetTask failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** The bytes of a file artifact whose parts are base64 chunks (v1.0 `raw`, or v0.3 `file.bytes`). */
// biome-ignore lint/suspicious/noExplicitAny: artifacts are inspected freely in tests
export function artifactText(artifact: any): string {
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const chunks = artifact.parts.map((p: any) => Buffer.from(p.raw ?? p.file?.bytes, 'base64'));
  return Buffer.concat(chunks).toString('utf8');
}

/** CSV text split into lines (the export writes CRLF line ends, RFC 4180). */
export const csvLines = (text: string): string[] => text.split('\r\n').filter((l) => l !== '');

export const CSV_HEADER = 'id,name,email,amount,created_at';

/** Opens a v1.0 (or v0.3, without the header) JSON-RPC streaming call, with the agent's credentials. */
export function rpcStream(
  agent: Agent,
  method: string,
  params: unknown,
  o: {
    version?: '1.0' | '0.3';
    lastEventId?: string;
    id?: number | string;
    headers?: Record<string, string>;
  } = {},
): Promise<SseStream> {
  return openSse(`${agent.url}/`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'text/event-stream',
      ...(o.version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
      ...(o.lastEventId !== undefined ? { 'Last-Event-ID': o.lastEventId } : {}),
      ...agent.credentials,
      ...o.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: o.id ?? 1, method, params }),
  });
}

/** Polls `probe` until it returns a value other than undefined. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
