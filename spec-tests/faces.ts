import { createParser } from 'eventsource-parser';
import { expect } from 'vitest';
import { legacyMessage } from './a2a.js';
import { type Agent, userMessage } from './harness.js';
import type { SseEvent } from './sse.js';

/**
 * Every task operation of every face (JSON-RPC and REST, v1.0 and v0.3), as data: the authorization
 * tests send each one as the task's owner, as other principals, and for a task that does not exist.
 */

/** A whole HTTP answer: its JSON body, or the events of its stream. */
export interface Reply {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
  body?: any;
  /** An event stream: the events read (at most `maxEvents`). */
  events?: SseEvent[];
  /** An event stream: whether the server ended it (rather than the reader stopping). */
  ended?: boolean;
}

export interface ReadOptions {
  /** Stop reading a stream after this many events (default 20). */
  maxEvents?: number;
  /** Stop reading a stream when nothing arrives for this long (default 2000 ms). */
  idleMs?: number;
}

/** Sends one request and reads its answer: JSON as a whole, an event stream up to a point. */
export async function request(url: string, init: RequestInit, o: ReadOptions = {}): Promise<Reply> {
  const controller = new AbortController();
  const res = await fetch(url, { ...init, signal: controller.signal });
  if (!String(res.headers.get('content-type')).startsWith('text/event-stream')) {
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, headers: res.headers, body };
  }
  const events: SseEvent[] = [];
  const parser = createParser({
    onEvent: (e) => events.push({ id: e.id, event: e.event, data: JSON.parse(e.data) }),
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const maxEvents = o.maxEvents ?? 20;
  let ended = false;
  try {
    while (events.length < maxEvents) {
      const read = reader.read();
      read.catch(() => undefined); // rejected by the abort below when the reader stops first
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<'idle'>((resolve) => {
        timer = setTimeout(() => resolve('idle'), o.idleMs ?? 2000);
      });
      const chunk = await Promise.race([read, idle]);
      clearTimeout(timer);
      if (chunk === 'idle') break;
      if (chunk.done) {
        ended = true;
        break;
      }
      parser.feed(decoder.decode(chunk.value, { stream: true }));
    }
  } finally {
    controller.abort();
  }
  return { status: res.status, headers: res.headers, events: events.slice(0, maxEvents), ended };
}

export type Face = 'JSON-RPC v1.0' | 'JSON-RPC v0.3' | 'REST v1.0' | 'REST v0.3';
export const FACES: Face[] = ['JSON-RPC v1.0', 'JSON-RPC v0.3', 'REST v1.0', 'REST v0.3'];

/** One operation on one task, sent with the credentials of the agent handle it is given. */
export interface TaskOp {
  face: Face;
  name: string;
  /** The answer is a stream (or, on failure, an error). */
  stream: boolean;
  /** The owner's successful answer names the task. */
  namesTask: boolean;
  send(agent: Agent, taskId: string, o?: ReadOptions): Promise<Reply>;
}

/** The id of the webhook every owner's task in these tests has (so Get and Delete have a target). */
export const CONFIG_ID = 'ops';
/** Nothing listens on port 9: deliveries just fail (the agent must be launched with PUSH_ALLOW for it). */
export const HOOK = 'http://127.0.0.1:9/hook';

const rpc =
  (
    version: '1.0' | '0.3',
    method: string,
    params: (taskId: string) => unknown,
    h: Record<string, string> = {},
  ) =>
  (agent: Agent, taskId: string, o?: ReadOptions) =>
    request(
      `${agent.url}/`,
      {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          ...(version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
          ...agent.credentials,
          ...h,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params(taskId) }),
      },
      o,
    );

const rest =
  (
    version: '1.0' | '0.3',
    method: string,
    path: (taskId: string) => string,
    body?: (taskId: string) => unknown,
    h: Record<string, string> = {},
  ) =>
  (agent: Agent, taskId: string, o?: ReadOptions) =>
    request(
      `${agent.url}/rest${version === '0.3' ? '/v1' : ''}${path(taskId)}`,
      {
        method,
        headers: {
          ...(version === '1.0' ? { 'A2A-Version': '1.0' } : {}),
          ...(body ? { 'Content-Type': 'application/json' } : {}),
          ...agent.credentials,
          ...h,
        },
        body: body && JSON.stringify(body(taskId)),
      },
      o,
    );

type OpSpec = Omit<TaskOp, 'stream' | 'namesTask'> & Partial<TaskOp>;
const op = (spec: OpSpec): TaskOp => ({ stream: false, namesTask: true, ...spec });

/** A follow-up text message to the task (v1.0 shape). */
const followUp = (taskId: string) => userMessage('let me in', { taskId });
const legacyFollowUp = (taskId: string) => legacyMessage([{ kind: 'text', text: 'let me in' }], { taskId });
/** v0.3 REST (proto JSON): `content` instead of `parts`. */
const legacyRestFollowUp = (taskId: string) => ({
  message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', content: [{ text: 'let me in' }], taskId },
  configuration: { blocking: false },
});
const newConfig = { id: 'intruder', url: `${HOOK}/intruder` };

export const TASK_OPS: TaskOp[] = [
  // JSON-RPC v1.0
  op({ face: 'JSON-RPC v1.0', name: 'GetTask', send: rpc('1.0', 'GetTask', (id) => ({ id })) }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'GetTask historyLength 0',
    send: rpc('1.0', 'GetTask', (id) => ({ id, historyLength: 0 })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'CancelTask',
    send: rpc('1.0', 'CancelTask', (id) => ({ id })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'SendMessage with taskId',
    send: rpc('1.0', 'SendMessage', (id) => ({
      message: followUp(id),
      configuration: { returnImmediately: true },
    })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'SendMessage with taskId and a webhook',
    send: rpc('1.0', 'SendMessage', (id) => ({
      message: followUp(id),
      configuration: { returnImmediately: true, taskPushNotificationConfig: newConfig },
    })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'SendStreamingMessage with taskId',
    stream: true,
    send: rpc('1.0', 'SendStreamingMessage', (id) => ({ message: followUp(id) })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'SubscribeToTask',
    stream: true,
    send: rpc('1.0', 'SubscribeToTask', (id) => ({ id })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'SubscribeToTask with Last-Event-ID 0 (replay)',
    stream: true,
    send: rpc('1.0', 'SubscribeToTask', (id) => ({ id }), { 'Last-Event-ID': '0' }),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'CreateTaskPushNotificationConfig',
    send: rpc('1.0', 'CreateTaskPushNotificationConfig', (taskId) => ({ taskId, ...newConfig })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'GetTaskPushNotificationConfig',
    send: rpc('1.0', 'GetTaskPushNotificationConfig', (taskId) => ({ taskId, id: CONFIG_ID })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'ListTaskPushNotificationConfigs',
    send: rpc('1.0', 'ListTaskPushNotificationConfigs', (taskId) => ({ taskId })),
  }),
  op({
    face: 'JSON-RPC v1.0',
    name: 'DeleteTaskPushNotificationConfig',
    namesTask: false,
    send: rpc('1.0', 'DeleteTaskPushNotificationConfig', (taskId) => ({ taskId, id: CONFIG_ID })),
  }),

  // JSON-RPC v0.3
  op({ face: 'JSON-RPC v0.3', name: 'tasks/get', send: rpc('0.3', 'tasks/get', (id) => ({ id })) }),
  op({
    face: 'JSON-RPC v0.3',
    name: 'tasks/cancel',
    send: rpc('0.3', 'tasks/cancel', (id) => ({ id })),
  }),
  op({
    face: 'JSON-RPC v0.3',
    name: 'message/send with taskId',
    send: rpc('0.3', 'message/send', (id) => ({
      message: legacyFollowUp(id),
      configuration: { blocking: false },
    })),
  }),
  op({
    face: 'JSON-RPC v0.3',
    name: 'message/stream with taskId',
    stream: true,
    send: rpc('0.3', 'message/stream', (id) => ({ message: legacyFollowUp(id) })),
  }),
  op({
    face: 'JSON-RPC v0.3',
    name: 'tasks/resubscribe',
    stream: true,
    send: rpc('0.3', 'tasks/resubscribe', (id) => ({ id })),
  }),
  op({
    face: 'JSON-RPC v0.3',
    name: 'tasks/pushNotificationConfig/set',
    send: rpc('0.3', 'tasks/pushNotificationConfig/set', (taskId) => ({
      taskId,
      pushNotificationConfig: newConfig,
    })),
  }),
  op({
    face: 'JSON-RPC v0.3',
    name: 'tasks/pushNotificationConfig/get',
    send: rpc('0.3', 'tasks/pushNotificationConfig/get', (id) => ({
      id,
      pushNotificationConfigId: CONFIG_ID,
    })),
  }),
  op({
    face: 'JSON-RPC v0.3',
    name: 'tasks/pushNotificationConfig/list',
    send: rpc('0.3', 'tasks/pushNotificationConfig/list', (id) => ({ id })),
  }),
  op({
    face: 'JSON-RPC v0.3',
    name: 'tasks/pushNotificationConfig/delete',
    namesTask: false,
    send: rpc('0.3', 'tasks/pushNotificationConfig/delete', (id) => ({
      id,
      pushNotificationConfigId: CONFIG_ID,
    })),
  }),

  // REST v1.0
  op({ face: 'REST v1.0', name: 'GET /tasks/{id}', send: rest('1.0', 'GET', (id) => `/tasks/${id}`) }),
  op({
    face: 'REST v1.0',
    name: 'POST /tasks/{id}:cancel',
    send: rest('1.0', 'POST', (id) => `/tasks/${id}:cancel`),
  }),
  op({
    face: 'REST v1.0',
    name: 'POST /message:send with taskId',
    send: rest(
      '1.0',
      'POST',
      () => '/message:send',
      (id) => ({ message: followUp(id), configuration: { returnImmediately: true } }),
    ),
  }),
  op({
    face: 'REST v1.0',
    name: 'POST /message:stream with taskId',
    stream: true,
    send: rest(
      '1.0',
      'POST',
      () => '/message:stream',
      (id) => ({ message: followUp(id) }),
    ),
  }),
  op({
    face: 'REST v1.0',
    name: 'GET /tasks/{id}:subscribe',
    stream: true,
    send: rest('1.0', 'GET', (id) => `/tasks/${id}:subscribe`),
  }),
  op({
    face: 'REST v1.0',
    name: 'POST /tasks/{id}:subscribe with Last-Event-ID 0',
    stream: true,
    send: rest('1.0', 'POST', (id) => `/tasks/${id}:subscribe`, undefined, { 'Last-Event-ID': '0' }),
  }),
  op({
    face: 'REST v1.0',
    name: 'POST /tasks/{id}/pushNotificationConfigs',
    send: rest(
      '1.0',
      'POST',
      (id) => `/tasks/${id}/pushNotificationConfigs`,
      () => newConfig,
    ),
  }),
  op({
    face: 'REST v1.0',
    name: 'GET /tasks/{id}/pushNotificationConfigs/{configId}',
    send: rest('1.0', 'GET', (id) => `/tasks/${id}/pushNotificationConfigs/${CONFIG_ID}`),
  }),
  op({
    face: 'REST v1.0',
    name: 'GET /tasks/{id}/pushNotificationConfigs',
    send: rest('1.0', 'GET', (id) => `/tasks/${id}/pushNotificationConfigs`),
  }),
  op({
    face: 'REST v1.0',
    name: 'DELETE /tasks/{id}/pushNotificationConfigs/{configId}',
    namesTask: false,
    send: rest('1.0', 'DELETE', (id) => `/tasks/${id}/pushNotificationConfigs/${CONFIG_ID}`),
  }),

  // REST v0.3 (under /rest/v1)
  op({ face: 'REST v0.3', name: 'GET /v1/tasks/{id}', send: rest('0.3', 'GET', (id) => `/tasks/${id}`) }),
  op({
    face: 'REST v0.3',
    name: 'POST /v1/tasks/{id}:cancel',
    send: rest('0.3', 'POST', (id) => `/tasks/${id}:cancel`),
  }),
  op({
    face: 'REST v0.3',
    name: 'POST /v1/message:send with taskId',
    send: rest('0.3', 'POST', () => '/message:send', legacyRestFollowUp),
  }),
  op({
    face: 'REST v0.3',
    name: 'POST /v1/message:stream with taskId',
    stream: true,
    send: rest('0.3', 'POST', () => '/message:stream', legacyRestFollowUp),
  }),
  op({
    face: 'REST v0.3',
    name: 'GET /v1/tasks/{id}:subscribe',
    stream: true,
    send: rest('0.3', 'GET', (id) => `/tasks/${id}:subscribe`),
  }),
  op({
    face: 'REST v0.3',
    name: 'POST /v1/tasks/{id}/pushNotificationConfigs',
    send: rest(
      '0.3',
      'POST',
      (id) => `/tasks/${id}/pushNotificationConfigs`,
      (id) => ({ name: `tasks/${id}`, pushNotificationConfig: newConfig }),
    ),
  }),
  op({
    face: 'REST v0.3',
    name: 'GET /v1/tasks/{id}/pushNotificationConfigs/{configId}',
    send: rest('0.3', 'GET', (id) => `/tasks/${id}/pushNotificationConfigs/${CONFIG_ID}`),
  }),
  op({
    face: 'REST v0.3',
    name: 'GET /v1/tasks/{id}/pushNotificationConfigs',
    send: rest('0.3', 'GET', (id) => `/tasks/${id}/pushNotificationConfigs`),
  }),
  op({
    face: 'REST v0.3',
    name: 'DELETE /v1/tasks/{id}/pushNotificationConfigs/{configId}',
    namesTask: false,
    send: rest('0.3', 'DELETE', (id) => `/tasks/${id}/pushNotificationConfigs/${CONFIG_ID}`),
  }),
];

/**
 * What a caller can tell from a reply, with the task id replaced: two replies with the same view
 * are indistinguishable (status, headers that matter, body, stream events, whether it ended).
 */
export function view(r: Reply, taskId: string): unknown {
  const seen = {
    status: r.status,
    contentType: r.headers.get('content-type'),
    wwwAuthenticate: r.headers.get('www-authenticate'),
    body: r.body,
    events: r.events?.map((e) => ({ id: e.id, event: e.event, data: e.data })),
    ended: r.ended,
  };
  return JSON.parse(JSON.stringify(seen).replaceAll(taskId, '<task>'));
}

/** The error a reply carries: a JSON-RPC error (also as a stream's event), or a REST error body. */
// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
function errorOf(r: Reply): any {
  const first = r.events?.[0]?.data;
  return r.body?.error ?? first?.error ?? (r.status >= 400 ? r.body : undefined);
}

/** The reply says TaskNotFound, as its face says it. */
export function expectTaskNotFound(r: Reply, face: Face, what: string): void {
  const error = errorOf(r);
  switch (face) {
    case 'JSON-RPC v1.0':
    case 'JSON-RPC v0.3':
      expect(r.status, what).toBe(200);
      expect(error?.code, `${what}: ${JSON.stringify(r.body ?? r.events)}`).toBe(-32001);
      break;
    case 'REST v1.0':
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(404);
      expect(error?.details?.[0]?.reason, what).toBe('TASK_NOT_FOUND');
      break;
    case 'REST v0.3':
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(404);
      expect(error?.code, what).toBe(-32001);
      break;
  }
}

/** The reply is a success (no error anywhere in it), and names the task where the operation returns it. */
export function expectSuccess(r: Reply, op: TaskOp, taskId: string): void {
  const what = `${op.face} ${op.name}: ${JSON.stringify(r.body ?? r.events)}`;
  expect([200, 201, 204], what).toContain(r.status);
  expect(errorOf(r), what).toBeUndefined();
  if (op.stream) {
    expect(r.events?.length, what).toBeGreaterThan(0);
    for (const e of r.events ?? []) expect(e.data.error, what).toBeUndefined();
  }
  if (op.namesTask) expect(JSON.stringify(r.body ?? r.events), what).toContain(taskId);
}
