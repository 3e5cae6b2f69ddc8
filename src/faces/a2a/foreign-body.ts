import { REST_PATH } from './agent-card.js';
import type { ProtocolVersion } from './version.js';

/**
 * A message sent in the shape of another protocol version or binding than the one it reached,
 * said so a person knows where it belongs. The three shapes differ in a few fields:
 *
 * - v0.3 JSON-RPC: `role: "user"`, `parts: [{"kind": "text", "text": "hi"}]`, `kind: "message"`;
 * - v0.3 HTTP+JSON (`/rest/v1`): protobuf JSON, `role: "ROLE_USER"`, `content: [{"text": "hi"}]`;
 * - v1.0 (JSON-RPC and HTTP+JSON): `role: "ROLE_USER"`, `parts: [{"text": "hi"}]`.
 *
 * Only a message its own binding cannot take is refused here (an unknown role, or its parts under
 * the other name): a v1.0 message with a stray `kind` is still a valid v1.0 message.
 */

export type Binding = { transport: 'jsonrpc' | 'rest'; version: ProtocolVersion };

type Shape = 'v0.3 JSON-RPC' | 'v0.3 HTTP+JSON' | 'v1.0';

const V1_ROLES = new Set<unknown>(['ROLE_UNSPECIFIED', 'ROLE_USER', 'ROLE_AGENT', 0, 1, 2]);
const V03_ROLES = new Set<unknown>(['user', 'agent']);

/** What the send methods take, by binding: the example a refusal shows. */
const EXPECTED: Record<string, string> = {
  'jsonrpc 1.0': 'v1.0 takes "role": "ROLE_USER" and "parts": [{"text": "hi"}]',
  'rest 1.0': 'v1.0 takes "role": "ROLE_USER" and "parts": [{"text": "hi"}]',
  'jsonrpc 0.3': 'v0.3 takes "role": "user" and "parts": [{"kind": "text", "text": "hi"}]',
  'rest 0.3': 'v0.3 HTTP+JSON takes protobuf JSON: "role": "ROLE_USER" and "content": [{"text": "hi"}]',
};

/** Where a message of each shape goes, said to a caller who sent it elsewhere. */
const HOME: Record<Shape, string> = {
  'v0.3 JSON-RPC':
    'send it as JSON-RPC method message/send to / with no A2A-Version header (v0.3 is the default)',
  'v0.3 HTTP+JSON': `POST it to ${REST_PATH}/v1/message:send with no A2A-Version header`,
  'v1.0': `send it with A2A-Version: 1.0 (JSON-RPC method SendMessage, or POST ${REST_PATH}/message:send)`,
};

/**
 * Why the send request `body` (JSON-RPC params, or a REST body) cannot be the message of this
 * binding, naming the shape it has instead and where to send it, or naming a v1.0 role it does
 * not know; `undefined` otherwise (the usual checks then judge it).
 *
 * @example foreignMessage({ transport: 'rest', version: '1.0' }, { message: { role: 'user', parts: [] } })
 *   // 'message looks like an A2A v0.3 JSON-RPC message (role "user"); v1.0 takes ...; or send it as ...'
 */
export function foreignMessage(binding: Binding, body: unknown): string | undefined {
  const b = asObject(body);
  const message = asObject(b?.message) ?? (binding.version === '0.3' ? asObject(b?.request) : undefined);
  if (!message) return undefined;
  const [shape, seen] = shapeSigns(message)[0] ?? [];
  if (shape && seen && shape !== ownShape(binding) && refusedBy(binding, message)) {
    const key = `${binding.transport} ${binding.version}`;
    return `message looks like an A2A ${shape} message (${seen}); ${EXPECTED[key]}; or ${HOME[shape]}`;
  }
  // A role v1.0 does not know would be stored as "UNRECOGNIZED" by the SDK's decoder.
  const role = message.role;
  if (
    binding.version === '1.0' &&
    (typeof role === 'string' || typeof role === 'number') &&
    !V1_ROLES.has(role)
  )
    return `message.role must be "ROLE_USER" or "ROLE_AGENT", not ${JSON.stringify(role)}`;
  return undefined;
}

const ownShape = ({ transport, version }: Binding): Shape =>
  version === '1.0' ? 'v1.0' : transport === 'rest' ? 'v0.3 HTTP+JSON' : 'v0.3 JSON-RPC';

/** Whether the binding could not take this message as it is (so naming its shape helps). */
function refusedBy({ transport, version }: Binding, m: Record<string, unknown>): boolean {
  const role = m.role;
  if (version === '1.0') return (role !== undefined && !V1_ROLES.has(role)) || !Array.isArray(m.parts);
  if (transport === 'rest') return (role !== undefined && !V1_ROLES.has(role)) || !Array.isArray(m.content);
  return (role !== undefined && !V03_ROLES.has(role)) || partsOf(m).some((p) => p.kind === undefined);
}

/** The shapes the message shows signs of, strongest first, each with the fields that show it. */
function shapeSigns(m: Record<string, unknown>): [Shape, string][] {
  const parts = partsOf(m);
  const v03 = [
    V03_ROLES.has(m.role) ? `role ${JSON.stringify(m.role)}` : '',
    m.kind === 'message' ? 'kind "message"' : '',
    parts.some((p) => typeof p.kind === 'string') ? 'parts with "kind"' : '',
  ].filter(Boolean);
  const signs: [Shape, string][] = [];
  if (v03.length > 0) signs.push(['v0.3 JSON-RPC', v03.join(', ')]);
  if (Array.isArray(m.content) && m.parts === undefined)
    signs.push(['v0.3 HTTP+JSON', '"content" for its parts']);
  if (
    Array.isArray(m.parts) &&
    v03.length === 0 &&
    (typeof m.role !== 'string' || m.role.startsWith('ROLE_'))
  )
    signs.push(['v1.0', `"parts" without "kind"${typeof m.role === 'string' ? `, role "${m.role}"` : ''}`]);
  return signs;
}

function partsOf(m: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(m.parts) ? m.parts.map(asObject).filter((p) => p !== undefined) : [];
}

function asObject(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}
