import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, csvLines, HANDLE, skillMessage } from './a2a.js';
import { type Agent, launch, userMessage } from './harness.js';
import { openSse } from './sse.js';

interface Reply {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
  body: any;
}

/** ErrorInfo reason of a v1.0 REST error body (google.rpc.Status shape). */
// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
const reason = (body: any): string | undefined => body?.error?.details?.[0]?.reason;

describe('HTTP+JSON (REST)', () => {
  let agent: Agent;
  let base: string;
  beforeAll(async () => {
    // As a principal: ListTasks needs one, and ids are UUIDs only when callers are authenticated.
    agent = await launch({ apiKeys: { alice: 'acme' } });
    base = `${agent.url}/rest`;
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const rest = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = { 'A2A-Version': '1.0' },
  ): Promise<Reply> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...agent.credentials,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };

  describe('v1.0', () => {
    it('message:send returns a handle at once; tasks/{id} polls it to completion', async () => {
      const sent = await rest('POST', '/message:send', {
        message: skillMessage('export', { rows: 3, chunkRows: 1, delayMs: 200 }),
        configuration: { returnImmediately: true },
      });
      expect(sent.status).toBe(200);
      expect(sent.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
      const { id } = sent.body.task;
      expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(sent.body.task.status.state);
      await agent.waitForState(id, 'TASK_STATE_COMPLETED');
      const got = await rest('GET', `/tasks/${id}`);
      expect(got.status).toBe(200);
      expect(got.body.id).toBe(id);
      expect(got.body.status.state).toBe('TASK_STATE_COMPLETED');
      expect(csvLines(artifactText(got.body.artifacts[0]))).toHaveLength(4);
      const short = await rest('GET', `/tasks/${id}?historyLength=0`);
      expect(short.body.history ?? []).toEqual([]);
      expect((await rest('GET', `/tasks/${id}`)).body.history).toHaveLength(1);
    });

    it('a blocking message:send answers the finished task', async () => {
      const sent = await rest('POST', '/message:send', { message: userMessage('export 4 rows') });
      expect(sent.status).toBe(200);
      expect(sent.body.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(csvLines(artifactText(sent.body.task.artifacts[0]))).toHaveLength(5);
    });

    it('tasks lists with paging and filters', async () => {
      const contextId = crypto.randomUUID();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const sent = await rest('POST', '/message:send', {
          message: skillMessage('export', { rows: 1 }, { contextId }),
        });
        ids.push(sent.body.task.id);
      }
      const first = await rest('GET', `/tasks?contextId=${contextId}&pageSize=2`);
      expect(first.status).toBe(200);
      expect(first.body.totalSize).toBe(3);
      expect(first.body.tasks.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
      expect(first.body.tasks[0]).not.toHaveProperty('artifacts');
      const token = encodeURIComponent(first.body.nextPageToken);
      const second = await rest('GET', `/tasks?contextId=${contextId}&pageSize=2&pageToken=${token}`);
      expect(second.body.tasks.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
      expect(second.body.nextPageToken).toBe('');
      const filtered = await rest('GET', `/tasks?contextId=${contextId}&status=TASK_STATE_WORKING`);
      expect(filtered.body.tasks).toEqual([]);
      expect(filtered.body.totalSize).toBe(0);
      const withArtifacts = await rest(
        'GET',
        `/tasks?contextId=${contextId}&pageSize=1&includeArtifacts=true`,
      );
      expect(withArtifacts.body.tasks[0].artifacts).toHaveLength(1);
    });

    it('tasks/{id}:cancel cancels; a second cancel is 400 TASK_NOT_CANCELABLE (spec 5.4)', async () => {
      const sent = await rest('POST', '/message:send', {
        message: skillMessage('sleep', { seconds: 30 }),
        configuration: { returnImmediately: true },
      });
      const { id } = sent.body.task;
      await agent.waitForState(id, 'TASK_STATE_WORKING');
      const canceled = await rest('POST', `/tasks/${id}:cancel`);
      expect(canceled.status).toBe(200);
      expect(canceled.body.status.state).toBe('TASK_STATE_CANCELED');
      const again = await rest('POST', `/tasks/${id}:cancel`);
      expect(again.status).toBe(400);
      expect(again.body.error.status).toBe('FAILED_PRECONDITION');
      expect(reason(again.body)).toBe('TASK_NOT_CANCELABLE');
    });

    it('an unknown task is 404 TASK_NOT_FOUND for get, cancel and subscribe', async () => {
      for (const [method, path] of [
        ['GET', '/tasks/no-such-task'],
        ['POST', '/tasks/no-such-task:cancel'],
        ['POST', '/tasks/no-such-task:subscribe'],
      ] as const) {
        const r = await rest(method, path);
        expect(r.status, path).toBe(404);
        expect(r.body.error.status).toBe('NOT_FOUND');
        expect(reason(r.body)).toBe('TASK_NOT_FOUND');
      }
    });

    it('a bad body is 400 INVALID_ARGUMENT', async () => {
      const broken = await rest('POST', '/message:send', '{"message": ');
      expect(broken.status).toBe(400);
      expect(broken.body.error.status).toBe('INVALID_ARGUMENT');
      const noMessage = await rest('POST', '/message:send', {});
      expect(noMessage.status).toBe(400);
      expect(noMessage.body.error.message).toContain('message');
      const badSkill = await rest('POST', '/message:send', { message: skillMessage('teleport', {}) });
      expect(badSkill.status).toBe(400);
      expect(badSkill.body.error.message).toContain('"teleport"');
      const badInput = await rest('POST', '/message:send', {
        message: skillMessage('export', { rows: 'many' }),
      });
      expect(badInput.status).toBe(400);
      expect(badInput.body.error.message).toContain('input.rows');
    });

    it('a wrong Content-Type is 400 CONTENT_TYPE_NOT_SUPPORTED', async () => {
      const r = await rest('POST', '/message:send', 'export 1 row', {
        'A2A-Version': '1.0',
        'Content-Type': 'text/plain',
      });
      expect(r.status).toBe(400);
      expect(reason(r.body)).toBe('CONTENT_TYPE_NOT_SUPPORTED');
    });

    it('application/a2a+json bodies are accepted', async () => {
      const r = await rest(
        'POST',
        '/message:send',
        JSON.stringify({ message: userMessage('export 1 row') }),
        {
          'A2A-Version': '1.0',
          'Content-Type': 'application/a2a+json',
        },
      );
      expect(r.status).toBe(200);
      expect(r.body.task.status.state).toBe('TASK_STATE_COMPLETED');
    });

    it('a message to a finished task is 400 UNSUPPORTED_OPERATION', async () => {
      const done = await rest('POST', '/message:send', { message: userMessage('export 1 row') });
      const id = done.body.task.id;
      const r = await rest('POST', '/message:send', { message: userMessage('more', { taskId: id }) });
      expect(r.status).toBe(400);
      expect(reason(r.body)).toBe('UNSUPPORTED_OPERATION');
    });

    it('message:stream and tasks/{id}:subscribe answer SSE with event ids', async () => {
      const stream = await openSse(`${base}/message:stream`, {
        method: 'POST',
        headers: { 'A2A-Version': '1.0', 'Content-Type': 'application/json', ...agent.credentials },
        body: JSON.stringify({ message: skillMessage('export', { rows: 3, chunkRows: 1, delayMs: 150 }) }),
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const first = await stream.next();
      const id = first?.data.task.id;
      expect(typeof id).toBe('string');

      const sub = await openSse(`${base}/tasks/${id}:subscribe`, {
        headers: { 'A2A-Version': '1.0', ...agent.credentials },
      });
      expect(sub.status).toBe(200);
      const [subEvents, rest1] = await Promise.all([sub.rest(), stream.rest()]);
      for (const events of [[first, ...rest1], subEvents]) {
        const ids = events.map((e) => Number(e?.id));
        expect(ids.every((n, i) => Number.isInteger(n) && (i === 0 || n > (ids[i - 1] ?? 0)))).toBe(true);
        expect(events.at(-1)?.data.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
      }
      expect(subEvents[0]?.data.task.id).toBe(id);

      const late = await rest('POST', `/tasks/${id}:subscribe`);
      expect(late.status).toBe(400);
      expect(reason(late.body)).toBe('UNSUPPORTED_OPERATION');
    });
  });

  describe('v0.3 (under /rest/v1)', () => {
    const v03 = {};
    const legacyBody = (text: string, extra: Record<string, unknown> = {}) => ({
      message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', content: [{ text }], ...extra },
    });

    it('v1/message:send, v1/tasks/{id} and v1/tasks/{id}:cancel', async () => {
      const sent = await rest(
        'POST',
        '/v1/message:send',
        { ...legacyBody('sleep 30', { metadata: { skill: 'sleep' } }), configuration: { blocking: false } },
        v03,
      );
      // The SDK's v0.3 REST router answers a send with 201 Created.
      expect(sent.status).toBe(201);
      const { id } = sent.body.task;
      expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(sent.body.task.status.state);
      await agent.waitForState(id, 'TASK_STATE_WORKING');
      const got = await rest('GET', `/v1/tasks/${id}`, undefined, v03);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject({ id, status: { state: 'TASK_STATE_WORKING' } });
      const canceled = await rest('POST', `/v1/tasks/${id}:cancel`, undefined, v03);
      expect(canceled.status).toBe(200);
      // v0.3's proto spells the state with two Ls.
      expect(canceled.body.status.state).toBe('TASK_STATE_CANCELLED');
      const again = await rest('POST', `/v1/tasks/${id}:cancel`, undefined, v03);
      expect(again.status).toBe(400);
      expect(again.body.code).toBe(-32002);
      const unknown = await rest('GET', '/v1/tasks/no-such-task', undefined, v03);
      expect(unknown.status).toBe(404);
      expect(unknown.body.code).toBe(-32001);
    });

    it("v1/tasks (tasks/list) lists the caller's tasks in v0.3's shape, as ListTasks does, paged with a Link", async () => {
      const contextId = crypto.randomUUID();
      const ids: string[] = [];
      for (const input of [{ rows: 1 }, { rows: 2 }, { rows: 3 }]) {
        const sent = await rest('POST', '/message:send', {
          message: skillMessage('export', input, { contextId }),
        });
        ids.push(sent.body.task.id);
      }
      const sleeping = await rest('POST', '/message:send', {
        message: skillMessage('sleep', { seconds: 30 }, { contextId }),
        configuration: { returnImmediately: true },
      });
      await rest('POST', `/tasks/${sleeping.body.task.id}:cancel`);

      const all = await rest('GET', `/v1/tasks?contextId=${contextId}&includeArtifacts=true`, undefined, v03);
      expect(all.status).toBe(200);
      expect(all.headers.get('content-type')).toMatch(/^application\/json/);
      expect(Array.isArray(all.body)).toBe(true);
      expect(all.body.map((t: { id: string }) => t.id)).toEqual([
        sleeping.body.task.id,
        ids[2],
        ids[1],
        ids[0],
      ]);
      // Each exactly as v0.3's GET v1/tasks/{id} writes it (the v0.3 proto's JSON).
      for (const task of all.body)
        expect(task).toEqual((await rest('GET', `/v1/tasks/${task.id}`, undefined, v03)).body);
      expect(all.body[0].status.state).toBe('TASK_STATE_CANCELLED');
      expect(all.body[1].artifacts[0].parts[0].file).toMatchObject({ mimeType: 'text/csv' });
      expect(all.body[1].history[0]).toMatchObject({
        role: 'ROLE_USER',
        content: [{ data: { data: { skill: 'export' } } }],
      });
      expect(all.headers.get('link')).toBeNull();
      // The same tasks as v1.0's ListTasks, under the same authorization.
      const v1 = await rest('GET', `/tasks?contextId=${contextId}`);
      expect(all.body.map((t: { id: string }) => t.id)).toEqual(
        v1.body.tasks.map((t: { id: string }) => t.id),
      );
      const bare = await fetch(`${base}/v1/tasks`);
      expect(bare.status).toBe(401);
      expect(((await bare.json()) as { code: number }).code).toBe(-32050);

      // Paged: the next page is the Link header's.
      const first = await rest('GET', `/v1/tasks?contextId=${contextId}&pageSize=3`, undefined, v03);
      expect(first.body.map((t: { id: string }) => t.id)).toEqual([sleeping.body.task.id, ids[2], ids[1]]);
      expect(first.body[1]).not.toHaveProperty('artifacts');
      const link = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
      expect(link).toMatch(/^\/rest\/v1\/tasks\?.*pageToken=/);
      const next = await fetch(`${agent.url}${link}`, { headers: agent.credentials });
      expect(((await next.json()) as { id: string }[]).map((t) => t.id)).toEqual([ids[0]]);
      expect(next.headers.get('link')).toBeNull();

      // status in v0.3's names, the v0.3 proto's or v1.0's.
      for (const status of ['canceled', 'TASK_STATE_CANCELLED', 'TASK_STATE_CANCELED']) {
        const only = await rest('GET', `/v1/tasks?contextId=${contextId}&status=${status}`, undefined, v03);
        expect(
          only.body.map((t: { id: string }) => t.id),
          status,
        ).toEqual([sleeping.body.task.id]);
      }
      const bad = await rest('GET', '/v1/tasks?status=sleepy', undefined, v03);
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe(-32602);
      expect(bad.body.message).toContain('status must be a task state');
      const tooMany = await rest('GET', '/v1/tasks?pageSize=1000', undefined, v03);
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.code).toBe(-32602);
    });

    it('a blocking v1/message:send returns the finished task with its file artifact', async () => {
      const sent = await rest(
        'POST',
        '/v1/message:send',
        { ...legacyBody('export 2 rows'), configuration: { blocking: true } },
        v03,
      );
      expect(sent.body.task.status.state).toBe('TASK_STATE_COMPLETED');
      const part = sent.body.task.artifacts[0].parts[0];
      expect(part.file.mimeType).toBe('text/csv');
      expect(csvLines(Buffer.from(part.file.fileWithBytes, 'base64').toString())).toHaveLength(3);
    });

    it('v1/message:stream and v1/tasks/{id}:subscribe stream to completion', async () => {
      const stream = await openSse(`${base}/v1/message:stream`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...agent.credentials },
        body: JSON.stringify(legacyBody('export 3 rows')),
      });
      expect(stream.status).toBe(200);
      const events = await stream.rest();
      expect(events[0]?.data.task.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(events.at(-1)?.data.statusUpdate).toMatchObject({
        final: true,
        status: { state: 'TASK_STATE_COMPLETED' },
      });
      expect(events.every((e) => e.id !== undefined)).toBe(true);

      const sent = await rest(
        'POST',
        '/v1/message:send',
        {
          ...legacyBody('export', {
            metadata: { skill: 'export', input: { rows: 3, chunkRows: 1, delayMs: 150 } },
          }),
          configuration: { blocking: false },
        },
        v03,
      );
      const sub = await openSse(`${base}/v1/tasks/${sent.body.task.id}:subscribe`, {
        headers: agent.credentials,
      });
      const subEvents = await sub.rest();
      expect(subEvents[0]?.data.task.id).toBe(sent.body.task.id);
      expect(subEvents.at(-1)?.data.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    });
  });

  it('an unknown path is 404', async () => {
    expect((await rest('GET', '/nothing/here')).status).toBe(404);
    expect((await fetch(`${agent.url}/nothing`)).status).toBe(404);
  });
});

describe('HTTP+JSON: a blocking send past BLOCKING_TIMEOUT_MS', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { BLOCKING_TIMEOUT_MS: '1200', SSE_KEEPALIVE_MS: '200' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const post = async (path: string, body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${agent.url}/rest${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...agent.credentials, ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };

  it('v1.0: kept alive with spaces, answered with the task and a status message saying so (not stored)', async () => {
    const sent = await post(
      '/message:send',
      { message: skillMessage('sleep', { seconds: 30 }) },
      { 'A2A-Version': '1.0' },
    );
    expect(sent.status).toBe(200);
    expect(sent.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
    expect(sent.headers.get('content-length')).toBeNull();
    expect(sent.text).toMatch(/^ {3,}\{"task":/);
    const { task } = JSON.parse(sent.text);
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    expect(task.status.message.parts[0].text).toMatch(/^Still working after 1\.\d s; /);
    expect(task.status.message.parts[0].text).toContain(`Poll GetTask ${task.id} every `);
    expect(task.metadata[HANDLE].pollIntervalMs).toBeGreaterThan(0);
    const got = await fetch(`${agent.url}/rest/tasks/${task.id}`, {
      headers: { ...agent.credentials, 'A2A-Version': '1.0' },
    });
    // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
    const stored: any = await got.json();
    expect(stored.status.state).toBe('TASK_STATE_WORKING');
    expect(stored.status.message).toBeUndefined();
    await post(`/tasks/${task.id}:cancel`, {}, { 'A2A-Version': '1.0' });
  });

  it('v0.3: the same, with the 201 of a v0.3 send and v0.3 method names', async () => {
    const sent = await post(
      '/v1/message:send',
      {
        message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', content: [{ text: 'sleep 30' }] },
        configuration: { blocking: true },
        metadata: {},
      },
      {},
    );
    expect(sent.status).toBe(201);
    expect(sent.text).toMatch(/^ {3,}\{"task":/);
    const { task } = JSON.parse(sent.text);
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    expect(task.status.message.content[0].text).toContain(`Poll tasks/get ${task.id} every `);
    expect((await post(`/v1/tasks/${task.id}:cancel`, {}, {})).status).toBe(200);
  });
});
