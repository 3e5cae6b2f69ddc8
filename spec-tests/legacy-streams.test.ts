import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, legacyMessage, rpcStream } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { openSse, type SseStream } from './sse.js';

/**
 * The v0.3 streams a v0.3 client reads: JSON-RPC message/stream, REST `POST /v1/message:stream`
 * and `GET|POST /v1/tasks/{id}:subscribe`. Their bytes were recorded from the SDK's v0.3 transports
 * over our request handler (the snapshots below), and must stay those bytes whatever serves them:
 * each frame's key order, the event ids, `final` on the closing status (where the SDK puts it, and
 * where we add it: input-required), the refusals with their statuses, bodies and SSE error events.
 * Ids and times differ from run to run: they are numbered by first appearance (see normalized).
 */

/** A task's runner is held by a sleeping task (RUNNER_CONCURRENCY=1): a new task stays submitted until it ends. */
const HELD = { RUNNER_CONCURRENCY: '1', MAX_STREAMS: '3', SSE_KEEPALIVE_MS: '60000' };

/** A UUID (context and message ids) or a task id (hex). */
const ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{40,}\b/g;
const TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g;

/** Text with each distinct id named `<id-N>` by first appearance, and each time `<time>`. */
function normalized(text: string): string {
  const ids = new Map<string, string>();
  return text
    .replace(ID, (id) => {
      let name = ids.get(id);
      if (name === undefined) {
        name = `<id-${ids.size + 1}>`;
        ids.set(id, name);
      }
      return name;
    })
    .replace(TIME, '<time>');
}

const dataPart = (skill: string, input: Record<string, unknown>) => ({
  kind: 'data',
  data: { skill, input },
});
/** A v0.3 REST (proto JSON) send body for a skill. */
const restBody = (skill: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  message: {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    content: [{ data: { data: { skill, input } } }],
    ...extra,
  },
});

/** What a response says besides its events: status and the headers a client reads. */
const head = (s: { status: number; headers: Headers }) => ({
  status: s.status,
  type: s.headers.get('content-type'),
  cache: s.headers.get('cache-control'),
  retryAfter: s.headers.get('retry-after'),
});

describe('v0.3 streams, with the runner held', () => {
  let agent: Agent;
  let blocker: string;
  beforeAll(async () => {
    agent = await launch({ env: HELD });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
  const state = async (id: string): Promise<any> => (await agent.rpc('tasks/get', { id })).body.result;
  /** Holds the runner with a sleeping task, until released. */
  const hold = async () => {
    const message = legacyMessage([dataPart('sleep', { seconds: 300 })]);
    const { body } = await agent.rpc('message/send', { message, configuration: { blocking: false } });
    blocker = body.result.id;
    await eventually(async () => ((await state(blocker)).status.state === 'working' ? true : undefined));
  };
  const release = () => agent.rpc('tasks/cancel', { id: blocker });
  const rest = (path: string, init: RequestInit = {}) =>
    openSse(`${agent.url}/rest${path}`, {
      ...init,
      headers: { 'Content-Type': 'application/json', ...agent.credentials, ...init.headers },
    });
  /** Reads a stream whose task waits for the runner: its first frame, then the runner is released. */
  const released = async (stream: SseStream) => {
    expect(await stream.next()).toBeDefined();
    await release();
    await stream.rest();
    return normalized(stream.raw());
  };

  it('JSON-RPC message/stream: the submitted task, then its run, as the SDK wrote them', async () => {
    await hold();
    const message = legacyMessage([dataPart('export', { rows: 2, chunkRows: 1 })]);
    const stream = await rpcStream(agent, 'message/stream', { message }, { id: 'req-1' });
    expect(head(stream)).toEqual({
      status: 200,
      type: 'text/event-stream',
      cache: 'no-cache',
      retryAfter: null,
    });
    expect(await released(stream)).toMatchInlineSnapshot(`
      "id: 2
      data: {"id":"req-1","jsonrpc":"2.0","result":{"kind":"task","id":"<id-1>","contextId":"<id-2>","status":{"state":"submitted","timestamp":"<time>"},"history":[{"kind":"message","messageId":"<id-3>","role":"user","parts":[{"kind":"data","data":{"skill":"export","input":{"rows":2,"chunkRows":1}}}],"contextId":"<id-2>","taskId":"<id-1>"}],"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"createdAt":"<time>","lastUpdatedAt":"<time>","pollIntervalMs":2000,"ttlMs":86400000,"expiresAt":"<time>","queue":{"position":1,"ahead":0,"reason":"no free slot"},"eventId":"2"},"https://taskhandle.dev/extensions/task-generations/v1":{"generation":2}}}}

      id: 3
      data: {"id":"req-1","jsonrpc":"2.0","result":{"kind":"status-update","taskId":"<id-1>","contextId":"<id-2>","status":{"state":"working","timestamp":"<time>"},"final":false,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"3"}}}}

      id: 4
      data: {"id":"req-1","jsonrpc":"2.0","result":{"kind":"artifact-update","taskId":"<id-1>","contextId":"<id-2>","artifact":{"artifactId":"export-<id-1>","parts":[{"kind":"file","file":{"bytes":"aWQsbmFtZSxlbWFpbCxhbW91bnQsY3JlYXRlZF9hdA0KMSxDdXN0b21lciAxLGN1c3RvbWVyMUBleGFtcGxlLmNvbSwwLDIwMjYtMDEtMDFUMDA6MDA6MDAuMDAwWg0K","mimeType":"text/csv","name":"export.csv"}}],"name":"export.csv","description":"2 rows as CSV"},"append":false,"lastChunk":false,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"4"}}}}

      id: 5
      data: {"id":"req-1","jsonrpc":"2.0","result":{"kind":"status-update","taskId":"<id-1>","contextId":"<id-2>","status":{"state":"working","timestamp":"<time>"},"final":false,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"progress":{"percent":50,"message":"1 of 2 rows"},"eventId":"5"}}}}

      id: 6
      data: {"id":"req-1","jsonrpc":"2.0","result":{"kind":"artifact-update","taskId":"<id-1>","contextId":"<id-2>","artifact":{"artifactId":"export-<id-1>","parts":[{"kind":"file","file":{"bytes":"MixDdXN0b21lciAyLGN1c3RvbWVyMkBleGFtcGxlLmNvbSw3OS4xOSwyMDI2LTAxLTAxVDAwOjAxOjAwLjAwMFoNCg==","mimeType":"text/csv","name":"export.csv"}}],"name":"export.csv","description":"2 rows as CSV"},"append":true,"lastChunk":true,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"6"}}}}

      id: 7
      data: {"id":"req-1","jsonrpc":"2.0","result":{"kind":"status-update","taskId":"<id-1>","contextId":"<id-2>","status":{"state":"working","timestamp":"<time>"},"final":false,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"progress":{"percent":100,"message":"2 of 2 rows"},"eventId":"7"}}}}

      id: 8
      data: {"id":"req-1","jsonrpc":"2.0","result":{"kind":"status-update","taskId":"<id-1>","contextId":"<id-2>","status":{"state":"completed","message":{"kind":"message","messageId":"<id-4>","role":"agent","parts":[{"kind":"text","text":"Exported 2 rows to export.csv"}],"contextId":"<id-2>","taskId":"<id-1>"},"timestamp":"<time>"},"final":true,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"8"}}}}

      "
    `);
  });

  it('REST message:stream: the submitted task, then its run, as the SDK wrote them', async () => {
    await hold();
    const stream = await rest('/v1/message:stream', {
      method: 'POST',
      body: JSON.stringify(restBody('export', { rows: 2, chunkRows: 1 })),
    });
    expect(head(stream)).toEqual({
      status: 200,
      type: 'text/event-stream',
      cache: 'no-cache',
      retryAfter: null,
    });
    expect(await released(stream)).toMatchInlineSnapshot(`
      "id: 2
      data: {"task":{"id":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"<time>"},"history":[{"messageId":"<id-3>","contextId":"<id-2>","taskId":"<id-1>","role":"ROLE_USER","content":[{"data":{"data":{"skill":"export","input":{"rows":2,"chunkRows":1}}}}]}],"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"createdAt":"<time>","lastUpdatedAt":"<time>","pollIntervalMs":2000,"ttlMs":86400000,"expiresAt":"<time>","queue":{"position":1,"ahead":0,"reason":"no free slot"},"eventId":"2"},"https://taskhandle.dev/extensions/task-generations/v1":{"generation":2}}}}

      id: 3
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"3"}}}}

      id: 4
      data: {"artifactUpdate":{"taskId":"<id-1>","contextId":"<id-2>","artifact":{"artifactId":"export-<id-1>","name":"export.csv","description":"2 rows as CSV","parts":[{"file":{"fileWithBytes":"aWQsbmFtZSxlbWFpbCxhbW91bnQsY3JlYXRlZF9hdA0KMSxDdXN0b21lciAxLGN1c3RvbWVyMUBleGFtcGxlLmNvbSwwLDIwMjYtMDEtMDFUMDA6MDA6MDAuMDAwWg0K","mimeType":"text/csv"}}]},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"4"}}}}

      id: 5
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"progress":{"percent":50,"message":"1 of 2 rows"},"eventId":"5"}}}}

      id: 6
      data: {"artifactUpdate":{"taskId":"<id-1>","contextId":"<id-2>","artifact":{"artifactId":"export-<id-1>","name":"export.csv","description":"2 rows as CSV","parts":[{"file":{"fileWithBytes":"MixDdXN0b21lciAyLGN1c3RvbWVyMkBleGFtcGxlLmNvbSw3OS4xOSwyMDI2LTAxLTAxVDAwOjAxOjAwLjAwMFoNCg==","mimeType":"text/csv"}}]},"append":true,"lastChunk":true,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"6"}}}}

      id: 7
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"progress":{"percent":100,"message":"2 of 2 rows"},"eventId":"7"}}}}

      id: 8
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"<id-4>","contextId":"<id-2>","taskId":"<id-1>","role":"ROLE_AGENT","content":[{"text":"Exported 2 rows to export.csv"}]},"timestamp":"<time>"},"final":true,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"8"}}}}

      "
    `);
  });

  it('REST subscribe (GET and POST): the task, then its end, as the SDK wrote them', async () => {
    await hold();
    const message = legacyMessage([dataPart('export', { rows: 1 })]);
    const { body } = await agent.rpc('message/send', { message, configuration: { blocking: false } });
    const id = body.result.id;
    const get = await rest(`/v1/tasks/${id}:subscribe`);
    const post = await rest(`/v1/tasks/${id}:subscribe`, { method: 'POST', body: '{}' });
    for (const s of [get, post])
      expect(head(s)).toEqual({
        status: 200,
        type: 'text/event-stream',
        cache: 'no-cache',
        retryAfter: null,
      });
    expect(await post.next()).toBeDefined();
    const a = await released(get);
    await post.rest();
    const b = normalized(post.raw());
    expect(a).toEqual(b);
    expect(a).toMatchInlineSnapshot(`
      "id: 2
      data: {"task":{"id":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"<time>"},"history":[{"messageId":"<id-3>","contextId":"<id-2>","taskId":"<id-1>","role":"ROLE_USER","content":[{"data":{"data":{"skill":"export","input":{"rows":1}}}}]}],"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"createdAt":"<time>","lastUpdatedAt":"<time>","pollIntervalMs":2000,"ttlMs":86400000,"expiresAt":"<time>","queue":{"position":1,"ahead":0,"reason":"no free slot"},"eventId":"2"},"https://taskhandle.dev/extensions/task-generations/v1":{"generation":2}}}}

      id: 3
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"3"}}}}

      id: 4
      data: {"artifactUpdate":{"taskId":"<id-1>","contextId":"<id-2>","artifact":{"artifactId":"export-<id-1>","name":"export.csv","description":"1 rows as CSV","parts":[{"file":{"fileWithBytes":"aWQsbmFtZSxlbWFpbCxhbW91bnQsY3JlYXRlZF9hdA0KMSxDdXN0b21lciAxLGN1c3RvbWVyMUBleGFtcGxlLmNvbSwwLDIwMjYtMDEtMDFUMDA6MDA6MDAuMDAwWg0K","mimeType":"text/csv"}}]},"lastChunk":true,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"4"}}}}

      id: 5
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"progress":{"percent":100,"message":"1 of 1 rows"},"eventId":"5"}}}}

      id: 6
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"<id-4>","contextId":"<id-2>","taskId":"<id-1>","role":"ROLE_AGENT","content":[{"text":"Exported 1 rows to export.csv"}]},"timestamp":"<time>"},"final":true,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"6"}}}}

      "
    `);
  });

  it('REST subscribe with Last-Event-ID 0: the whole log of an ended task, `final` where the SDK puts it', async () => {
    const message = legacyMessage([dataPart('export', { rows: 2, chunkRows: 1 })]);
    const { body } = await agent.rpc('message/send', { message, configuration: { blocking: false } });
    const id = body.result.id;
    await eventually(async () => ((await state(id)).status.state === 'completed' ? true : undefined));
    const replay = await rest(`/v1/tasks/${id}:subscribe`, { headers: { 'Last-Event-ID': '0' } });
    await replay.rest();
    expect(normalized(replay.raw())).toMatchInlineSnapshot(`
      "id: 2
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"2"}}}}

      id: 3
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"3"}}}}

      id: 4
      data: {"artifactUpdate":{"taskId":"<id-1>","contextId":"<id-2>","artifact":{"artifactId":"export-<id-1>","name":"export.csv","description":"2 rows as CSV","parts":[{"file":{"fileWithBytes":"aWQsbmFtZSxlbWFpbCxhbW91bnQsY3JlYXRlZF9hdA0KMSxDdXN0b21lciAxLGN1c3RvbWVyMUBleGFtcGxlLmNvbSwwLDIwMjYtMDEtMDFUMDA6MDA6MDAuMDAwWg0K","mimeType":"text/csv"}}]},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"4"}}}}

      id: 5
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"progress":{"percent":50,"message":"1 of 2 rows"},"eventId":"5"}}}}

      id: 6
      data: {"artifactUpdate":{"taskId":"<id-1>","contextId":"<id-2>","artifact":{"artifactId":"export-<id-1>","name":"export.csv","description":"2 rows as CSV","parts":[{"file":{"fileWithBytes":"MixDdXN0b21lciAyLGN1c3RvbWVyMkBleGFtcGxlLmNvbSw3OS4xOSwyMDI2LTAxLTAxVDAwOjAxOjAwLjAwMFoNCg==","mimeType":"text/csv"}}]},"append":true,"lastChunk":true,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"6"}}}}

      id: 7
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"progress":{"percent":100,"message":"2 of 2 rows"},"eventId":"7"}}}}

      id: 8
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_COMPLETED","message":{"messageId":"<id-3>","contextId":"<id-2>","taskId":"<id-1>","role":"ROLE_AGENT","content":[{"text":"Exported 2 rows to export.csv"}]},"timestamp":"<time>"},"final":true,"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"8"}}}}

      "
    `);
    // Past its last event: nothing, and the stream ends.
    const past = await rest(`/v1/tasks/${id}:subscribe`, { headers: { 'Last-Event-ID': '100000' } });
    expect(head(past).status).toBe(200);
    expect(await past.rest()).toEqual([]);
  });

  it('REST subscribe marks final the input-required status that ends the stream (after its metadata)', async () => {
    const message = legacyMessage([dataPart('approval', { action: 'Ship the v0.3 streams' })]);
    const { body } = await agent.rpc('message/send', { message, configuration: { blocking: false } });
    const id = body.result.id;
    await eventually(async () => ((await state(id)).status.state === 'input-required' ? true : undefined));
    const replay = await rest(`/v1/tasks/${id}:subscribe`, { headers: { 'Last-Event-ID': '0' } });
    await replay.rest();
    expect(normalized(replay.raw())).toMatchInlineSnapshot(`
      "id: 2
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"2"}}}}

      id: 3
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_WORKING","timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"3"}}}}

      id: 4
      data: {"statusUpdate":{"taskId":"<id-1>","contextId":"<id-2>","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":{"messageId":"<id-3>","contextId":"<id-2>","taskId":"<id-1>","role":"ROLE_AGENT","content":[{"text":"Approve or reject: Ship the v0.3 streams\\nAnswer \\"approve\\" or \\"reject\\" (a comment may follow)."}],"metadata":{"taskhandle.answerSchema":{"type":"object","properties":{"decision":{"type":"string","enum":["approve","reject"]},"comment":{"type":"string","maxLength":2000}},"required":["decision"],"additionalProperties":false}}},"timestamp":"<time>"},"metadata":{"https://taskhandle.dev/extensions/task-handle/v1":{"eventId":"4"}},"final":true}}

      "
    `);
    await agent.rpc('tasks/cancel', { id });
  });
});

describe('v0.3 stream refusals', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: { MAX_STREAMS: '2', SSE_KEEPALIVE_MS: '60000' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
  const state = async (id: string): Promise<any> => (await agent.rpc('tasks/get', { id })).body.result;
  /** A refusal as a client reads it: status, headers and body text. */
  const refusal = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${agent.url}/rest${path}`, {
      ...init,
      headers: { 'Content-Type': 'application/json', ...agent.credentials, ...init.headers },
    });
    return { ...head(res), body: normalized(await res.text()) };
  };
  const rpcRefusal = async (params: unknown, id: number | string = 5) => {
    const s = await rpcStream(agent, 'message/stream', params, { id });
    await s.rest();
    return { ...head(s), raw: normalized(s.raw()) };
  };
  const sleeping = async () => {
    const message = legacyMessage([dataPart('sleep', { seconds: 300 })]);
    const { body } = await agent.rpc('message/send', { message, configuration: { blocking: false } });
    await eventually(async () =>
      (await state(body.result.id)).status.state === 'working' ? true : undefined,
    );
    return body.result.id as string;
  };
  const ended = async () => {
    const message = legacyMessage([dataPart('export', { rows: 1 })]);
    const { body } = await agent.rpc('message/send', { message, configuration: { blocking: true } });
    expect(body.result.status.state).toBe('completed');
    return body.result.id as string;
  };

  it('JSON-RPC message/stream answers each refusal as one SSE error event in v0.3 codes', async () => {
    const done = await ended();
    const cases = {
      noMessage: await rpcRefusal({}),
      noMessageId: await rpcRefusal({ message: { kind: 'message', role: 'user', parts: [] } }),
      notParams: await rpcRefusal([1, 2], 'a'),
      unknownSkill: await rpcRefusal({ message: legacyMessage([dataPart('teleport', {})]) }),
      badInput: await rpcRefusal({ message: legacyMessage([dataPart('sleep', { seconds: -5 })]) }),
      unknownTask: await rpcRefusal({
        message: legacyMessage([{ kind: 'text', text: 'more' }], { taskId: 'no-such-task' }),
      }),
      endedTask: await rpcRefusal({
        message: legacyMessage([{ kind: 'text', text: 'more' }], { taskId: done }),
      }),
    };
    expect(cases).toMatchInlineSnapshot(`
      {
        "badInput": {
          "cache": "no-cache",
          "raw": "data: {"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid input.seconds for skill \\"sleep\\": Too small: expected number to be >=0"}}

      ",
          "retryAfter": null,
          "status": 200,
          "type": "text/event-stream",
        },
        "endedTask": {
          "cache": "no-cache",
          "raw": "data: {"jsonrpc":"2.0","id":5,"error":{"code":-32004,"message":"Task <id-1> is completed and accepts no more messages"}}

      ",
          "retryAfter": null,
          "status": 200,
          "type": "text/event-stream",
        },
        "noMessage": {
          "cache": null,
          "raw": "{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"message must be an object"}}",
          "retryAfter": null,
          "status": 200,
          "type": "application/json",
        },
        "noMessageId": {
          "cache": null,
          "raw": "{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"message.messageId is required"}}",
          "retryAfter": null,
          "status": 200,
          "type": "application/json",
        },
        "notParams": {
          "cache": null,
          "raw": "{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"Invalid method parameters."}}",
          "retryAfter": null,
          "status": 200,
          "type": "application/json",
        },
        "unknownSkill": {
          "cache": "no-cache",
          "raw": "data: {"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown skill \\"teleport\\"; this agent offers: export, sleep, approval, batch"}}

      ",
          "retryAfter": null,
          "status": 200,
          "type": "text/event-stream",
        },
        "unknownTask": {
          "cache": "no-cache",
          "raw": "data: {"jsonrpc":"2.0","id":5,"error":{"code":-32001,"message":"Task no-such-task not found"}}

      ",
          "retryAfter": null,
          "status": 200,
          "type": "text/event-stream",
        },
      }
    `);
  });

  it('REST message:stream answers a refusal before the stream with its status and v0.3 error body', async () => {
    const done = await ended();
    const post = (body: unknown) =>
      refusal('/v1/message:stream', { method: 'POST', body: JSON.stringify(body) });
    const cases = {
      noMessage: await post({}),
      noMessageId: await post({ message: { role: 'ROLE_USER', content: [{ text: 'hi' }] } }),
      noRole: await post({ message: { messageId: crypto.randomUUID(), content: [{ text: 'hi' }] } }),
      badJson: await refusal('/v1/message:stream', { method: 'POST', body: '{"message":' }),
      unknownSkill: await post(restBody('teleport', {})),
      badInput: await post(restBody('sleep', { seconds: -5 })),
      unknownTask: await post({
        message: {
          messageId: crypto.randomUUID(),
          role: 'ROLE_USER',
          content: [{ text: 'more' }],
          taskId: 'nope',
        },
      }),
      endedTask: await post({
        message: {
          messageId: crypto.randomUUID(),
          role: 'ROLE_USER',
          content: [{ text: 'more' }],
          taskId: done,
        },
      }),
    };
    expect(cases).toMatchInlineSnapshot(`
      {
        "badInput": {
          "body": "{"code":-32602,"message":"Invalid input.seconds for skill \\"sleep\\": Too small: expected number to be >=0"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "badJson": {
          "body": "{"code":-32602,"message":"The body is not valid JSON"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "endedTask": {
          "body": "{"code":-32004,"message":"Task <id-1> is completed and accepts no more messages"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "noMessage": {
          "body": "{"code":-32602,"message":"SendMessageRequest missing message"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "noMessageId": {
          "body": "{"code":-32602,"message":"message.messageId is required"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "noRole": {
          "body": "{"code":-32602,"message":"Invalid role: 0"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "unknownSkill": {
          "body": "{"code":-32602,"message":"Unknown skill \\"teleport\\"; this agent offers: export, sleep, approval, batch"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "unknownTask": {
          "body": "{"code":-32001,"message":"Task nope not found"}",
          "cache": null,
          "retryAfter": null,
          "status": 404,
          "type": "application/json; charset=utf-8",
        },
      }
    `);
  });

  it('REST subscribe refuses an unknown or ended task with its status and v0.3 error body', async () => {
    const done = await ended();
    const cases = {
      unknown: await refusal('/v1/tasks/no-such-task:subscribe'),
      unknownPost: await refusal('/v1/tasks/no-such-task:subscribe', { method: 'POST', body: '{}' }),
      ended: await refusal(`/v1/tasks/${done}:subscribe`),
      badLastEventId: await refusal(`/v1/tasks/${done}:subscribe`, { headers: { 'Last-Event-ID': 'abc' } }),
      unknownResumed: await refusal('/v1/tasks/no-such-task:subscribe', {
        headers: { 'Last-Event-ID': '3' },
      }),
    };
    expect(cases).toMatchInlineSnapshot(`
      {
        "badLastEventId": {
          "body": "{"code":-32004,"message":"Task <id-1> is completed; nothing to stream"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "ended": {
          "body": "{"code":-32004,"message":"Task <id-1> is completed; nothing to stream"}",
          "cache": null,
          "retryAfter": null,
          "status": 400,
          "type": "application/json; charset=utf-8",
        },
        "unknown": {
          "body": "{"code":-32001,"message":"Task no-such-task not found"}",
          "cache": null,
          "retryAfter": null,
          "status": 404,
          "type": "application/json; charset=utf-8",
        },
        "unknownPost": {
          "body": "{"code":-32001,"message":"Task no-such-task not found"}",
          "cache": null,
          "retryAfter": null,
          "status": 404,
          "type": "application/json; charset=utf-8",
        },
        "unknownResumed": {
          "body": "{"code":-32001,"message":"Task no-such-task not found"}",
          "cache": null,
          "retryAfter": null,
          "status": 404,
          "type": "application/json; charset=utf-8",
        },
      }
    `);
  });

  it('past MAX_STREAMS each refuses as it did (SSE error event; 429 with Retry-After), and a client that leaves frees its slot', async () => {
    const id = await sleeping();
    const held = [
      await rpcStream(agent, 'tasks/resubscribe', { id }),
      await openSse(`${agent.url}/rest/v1/tasks/${id}:subscribe`, { headers: agent.credentials }),
    ];
    for (const s of held) expect(await s.next()).toBeDefined();
    const cases = {
      rpcSend: await rpcRefusal({ message: legacyMessage([dataPart('sleep', { seconds: 300 })]) }),
      restSend: await refusal('/v1/message:stream', {
        method: 'POST',
        body: JSON.stringify(restBody('sleep', { seconds: 300 })),
      }),
      restSubscribe: await refusal(`/v1/tasks/${id}:subscribe`),
    };
    expect(cases).toMatchInlineSnapshot(`
      {
        "restSend": {
          "body": "{"code":-32004,"message":"You have 2 streams open, the most allowed (MAX_STREAMS): close one, or poll (GetTask without currentGeneration: a waiting long poll counts as a stream) the tasks you follow least"}",
          "cache": null,
          "retryAfter": "5",
          "status": 429,
          "type": "application/json; charset=utf-8",
        },
        "restSubscribe": {
          "body": "{"code":-32004,"message":"You have 2 streams open, the most allowed (MAX_STREAMS): close one, or poll (GetTask without currentGeneration: a waiting long poll counts as a stream) the tasks you follow least"}",
          "cache": null,
          "retryAfter": "5",
          "status": 429,
          "type": "application/json; charset=utf-8",
        },
        "rpcSend": {
          "cache": "no-cache",
          "raw": "data: {"jsonrpc":"2.0","id":5,"error":{"code":-32054,"message":"You have 2 streams open, the most allowed (MAX_STREAMS): close one, or poll (GetTask without currentGeneration: a waiting long poll counts as a stream) the tasks you follow least"}}

      ",
          "retryAfter": null,
          "status": 200,
          "type": "text/event-stream",
        },
      }
    `);
    for (const s of held) s.close();
    // Each kind of stream gives its slot back: by the client leaving, and by the stream ending.
    const send = await eventually(async () => {
      const s = await rpcStream(agent, 'message/stream', {
        message: legacyMessage([dataPart('export', { rows: 1 })]),
      });
      const first = await s.next();
      return first?.data.result?.kind === 'task' ? s : undefined;
    });
    await send.rest();
    const restSend = await eventually(async () => {
      const s = await openSse(`${agent.url}/rest/v1/message:stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...agent.credentials },
        body: JSON.stringify(restBody('export', { rows: 1 })),
      });
      return s.status === 200 ? s : undefined;
    });
    await restSend.rest();
    const again = [
      await openSse(`${agent.url}/rest/v1/tasks/${id}:subscribe`, { headers: agent.credentials }),
      await openSse(`${agent.url}/rest/v1/tasks/${id}:subscribe`, { headers: agent.credentials }),
    ];
    for (const s of again) expect(s.status).toBe(200);
    for (const s of again) s.close();
    await agent.rpc('tasks/cancel', { id });
  });
});

describe('v0.3 streams at shutdown', () => {
  it('every kind ends when the server stops, with no final event', async () => {
    const agent = await launch({ env: { SSE_KEEPALIVE_MS: '60000' } });
    try {
      const message = () => legacyMessage([dataPart('sleep', { seconds: 300 })]);
      const send = await rpcStream(agent, 'message/stream', { message: message() });
      const restSend = await openSse(`${agent.url}/rest/v1/message:stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...agent.credentials },
        body: JSON.stringify(restBody('sleep', { seconds: 300 })),
      });
      const { body } = await agent.rpc('message/send', {
        message: message(),
        configuration: { blocking: false },
      });
      const subscribe = await openSse(`${agent.url}/rest/v1/tasks/${body.result.id}:subscribe`, {
        headers: agent.credentials,
      });
      const streams = [send, restSend, subscribe];
      for (const s of streams) expect(await s.next()).toBeDefined();
      const ending = Promise.all(streams.map((s) => s.rest()));
      const stopped = agent.stop();
      for (const events of await ending) {
        expect(
          events.every((e) => e.data.result?.final !== true && e.data.statusUpdate?.final !== true),
        ).toBe(true);
      }
      expect(await stopped).toBe(0);
    } finally {
      await agent.stop();
    }
  });
});

/** The one event of a stream whose send has no task: the agent's direct reply (the conformance fixture's). */
describe('v0.3 streams of a direct reply', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ conformance: true, env: { SSE_KEEPALIVE_MS: '60000' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('JSON-RPC and REST write the message as the one event, without an id', async () => {
    const rpc = await rpcStream(
      agent,
      'message/stream',
      {
        message: legacyMessage([{ kind: 'text', text: 'hi' }], {
          messageId: `tck-message-response-${crypto.randomUUID()}`,
        }),
      },
      { id: 3 },
    );
    await rpc.rest();
    const rest = await openSse(`${agent.url}/rest/v1/message:stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...agent.credentials },
      body: JSON.stringify({
        message: {
          messageId: `tck-message-response-${crypto.randomUUID()}`,
          role: 'ROLE_USER',
          content: [{ text: 'hi' }],
        },
      }),
    });
    await rest.rest();
    expect({ rpc: normalized(rpc.raw()), rest: normalized(rest.raw()) }).toMatchInlineSnapshot(`
      {
        "rest": "data: {"message":{"messageId":"<id-1>","role":"ROLE_AGENT","content":[{"text":"Direct message response"}]}}

      ",
        "rpc": "data: {"id":3,"jsonrpc":"2.0","result":{"kind":"message","messageId":"<id-1>","role":"agent","parts":[{"kind":"text","text":"Direct message response"}]}}

      ",
      }
    `);
  });
});
