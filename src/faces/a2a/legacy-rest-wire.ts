import type { StreamResponse, Task } from '@a2a-js/sdk';
import { V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';

/**
 * v0.3 HTTP+JSON's wire: the v0.3 proto's JSON. Each object is first the v0.3 JSON-RPC object the
 * SDK's own translation makes of a v1.0 one, then the proto's JSON of that, field for field as the
 * SDK's v0.3 REST router encodes it (its encoder is not exported): part metadata and file names
 * have no place in the v0.3 proto, empty strings and lists and false flags are left out, fields
 * come in the proto's order.
 */
const toV03 = new V03PushNotificationSerializer();

/** A task as GET /v1/tasks/{id} answers it. */
export function legacyRestTask(task: Task): Record<string, unknown> {
  return restTask(JSON.parse(toV03.serialize({ payload: { $case: 'task', value: task } }).body) as V03Task);
}

/**
 * A stream event's JSON as the SDK's v0.3 REST stream writes it (`{"task"}`, `{"message"}`,
 * `{"statusUpdate"}`, `{"artifactUpdate"}`). `closing`: the status ends the stream; the SDK marks
 * only a terminal one `final` (in its place), and we mark the others after the fact, as its last
 * field (what rest-response.ts's withSseIds did to the SDK's frame).
 */
export function legacyRestEventJson(response: StreamResponse, closing: boolean): string {
  const event = JSON.parse(toV03.serialize(response).body) as V03Event;
  if (event.kind === 'task') return JSON.stringify({ task: restTask(event) });
  if (event.kind === 'message') return JSON.stringify({ message: message(event) });
  if (event.kind === 'artifact-update') {
    const artifactUpdate = defined({
      taskId: event.taskId || undefined,
      contextId: event.contextId || undefined,
      artifact: event.artifact && artifact(event.artifact),
      append: event.append || undefined,
      lastChunk: event.lastChunk || undefined,
      metadata: event.metadata,
    });
    return JSON.stringify({ artifactUpdate });
  }
  const statusUpdate = defined({
    taskId: event.taskId || undefined,
    contextId: event.contextId || undefined,
    status: status(event.status),
    final: event.final || undefined,
    metadata: event.metadata,
  });
  if (closing) statusUpdate.final = true;
  return JSON.stringify({ statusUpdate });
}

interface V03Part {
  kind: 'text' | 'file' | 'data';
  text?: string;
  file?: { uri?: string; bytes?: string; mimeType?: string };
  data?: unknown;
}
interface V03Message {
  kind: 'message';
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: 'user' | 'agent';
  parts: V03Part[];
  metadata?: unknown;
  extensions?: string[];
}
interface V03Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: V03Part[];
  metadata?: unknown;
  extensions?: string[];
}
interface V03Status {
  state: string;
  message?: V03Message;
  timestamp?: string;
}
interface V03Task {
  kind: 'task';
  id: string;
  contextId: string;
  status: V03Status;
  artifacts?: V03Artifact[];
  history?: V03Message[];
  metadata?: unknown;
}
interface V03StatusUpdate {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: V03Status;
  final?: boolean;
  metadata?: unknown;
}
interface V03ArtifactUpdate {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact?: V03Artifact;
  append?: boolean;
  lastChunk?: boolean;
  metadata?: unknown;
}
type V03Event = V03Task | V03Message | V03StatusUpdate | V03ArtifactUpdate;

const restTask = (t: V03Task): Record<string, unknown> =>
  defined({
    id: t.id || undefined,
    contextId: t.contextId || undefined,
    status: status(t.status),
    artifacts: t.artifacts?.length ? t.artifacts.map(artifact) : undefined,
    history: t.history?.length ? t.history.map(message) : undefined,
    metadata: t.metadata,
  });

const status = (s: V03Status) =>
  defined({
    state: PROTO_STATE[s.state],
    message: s.message && message(s.message),
    timestamp: s.timestamp,
  });

const PROTO_STATE: Record<string, string | undefined> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELLED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
};

const message = (m: V03Message) =>
  defined({
    messageId: m.messageId || undefined,
    contextId: m.contextId || undefined,
    taskId: m.taskId || undefined,
    role: m.role === 'agent' ? 'ROLE_AGENT' : 'ROLE_USER',
    content: m.parts.length ? m.parts.map(part) : undefined,
    metadata: m.metadata,
    extensions: m.extensions?.length ? m.extensions : undefined,
  });

const artifact = (a: V03Artifact) =>
  defined({
    artifactId: a.artifactId || undefined,
    name: a.name || undefined,
    description: a.description || undefined,
    parts: a.parts.length ? a.parts.map(part) : undefined,
    metadata: a.metadata,
    extensions: a.extensions?.length ? a.extensions : undefined,
  });

function part(p: V03Part): Record<string, unknown> {
  if (p.kind === 'text') return { text: p.text };
  if (p.kind === 'data') return { data: defined({ data: p.data }) };
  const f = p.file ?? {};
  return {
    file: defined({
      ...(f.uri !== undefined ? { fileWithUri: f.uri } : { fileWithBytes: f.bytes }),
      mimeType: f.mimeType || undefined,
    }),
  };
}

/** The object without its undefined fields (as the proto's JSON leaves them out). */
function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
