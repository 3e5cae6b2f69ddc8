import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, skillMessage, startTask } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { openSse } from './sse.js';

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

interface Seen {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: unknown;
}
/** Every answer the tests saw: checked against /v1/openapi.json at the end. */
const seen: Seen[] = [];

interface Reply {
  status: number;
  headers: Headers;
  body: Json;
}

describe('/v1/jobs: tasks as HTTP 202 Accepted jobs', () => {
  let agent: Agent;
  const call = async (
    who: string | Record<string, string>,
    method: string,
    path: string,
    o: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Reply> => {
    const res = await fetch(`${agent.url}${path}`, {
      method,
      redirect: 'manual',
      headers: {
        ...agent.as(who).credentials,
        ...(o.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...o.headers,
      },
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
    });
    const contentType = res.headers.get('content-type') ?? '';
    const text = await res.text();
    const body = contentType.includes('json') && text ? (JSON.parse(text) as Json) : { text };
    seen.push({ method, path: path.split('?')[0] ?? path, status: res.status, contentType, body });
    return { status: res.status, headers: res.headers, body };
  };
  const post = (skill: string, input: Json, headers: Record<string, string> = {}, who = 'alice') =>
    call(who, 'POST', '/v1/jobs', { body: { skill, input }, headers });
  const pollUntil = async (id: string, status: string, who = 'alice'): Promise<Json> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await call(who, 'GET', `/v1/jobs/${id}`);
      if (r.body.status === status) return r.body;
      if (Date.now() > deadline) throw new Error(`job ${id} not ${status}: ${JSON.stringify(r.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'acme' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('POST answers 202 with Location, Retry-After and the handle; polling reaches the result', async () => {
    const r = await post('export', { rows: 10 });
    expect(r.status).toBe(202);
    const id = r.body.taskId as string;
    expect(r.headers.get('location')).toBe(`/v1/jobs/${id}`);
    expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(r.body).toMatchObject({ resultType: 'task', status: 'working' });
    for (const k of ['createdAt', 'lastUpdatedAt', 'ttlMs', 'pollIntervalMs'])
      expect(r.body).toHaveProperty(k);
    const done = await pollUntil(id, 'completed');
    expect(done.result).toBe(`/v1/jobs/${id}/result`);
    expect(done.statusMessage).toContain('Exported 10 rows');
    const got = await call('alice', 'GET', `/v1/jobs/${id}`);
    expect(got.headers.get('retry-after')).toBeNull();

    const see = await call('alice', 'GET', `/v1/jobs/${id}?follow=result`);
    expect(see.status).toBe(303);
    expect(see.headers.get('location')).toBe(`/v1/jobs/${id}/result`);

    const result = await call('alice', 'GET', `/v1/jobs/${id}/result`);
    expect(result.status).toBe(200);
    expect(result.body.artifacts).toHaveLength(1);
    expect(result.body.artifacts[0]).toMatchObject({ name: 'export.csv' });

    const file = await fetch(`${agent.url}/v1/jobs/${id}/result?download=1`, { headers: agent.credentials });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(file.headers.get('content-disposition')).toMatch(/^attachment; filename="export\.csv"/);
    expect((await file.text()).split('\r\n').filter(Boolean)).toHaveLength(11);
  });

  it('a running job: follow=result is the document (200), the result is 202 with Retry-After; cancel ends it', async () => {
    const { body } = await post('sleep', { seconds: 30 });
    const id = body.taskId as string;
    const get = await call('alice', 'GET', `/v1/jobs/${id}?follow=result`);
    expect(get.status).toBe(200);
    expect(get.headers.get('retry-after')).toBe('1');
    const pending = await call('alice', 'GET', `/v1/jobs/${id}/result`);
    expect(pending.status).toBe(202);
    expect(pending.headers.get('retry-after')).toBe('1');
    expect(pending.headers.get('location')).toBe(`/v1/jobs/${id}`);
    expect(pending.body).toMatchObject({ taskId: id, status: 'working' });

    const cancel = await call('alice', 'POST', `/v1/jobs/${id}:cancel`);
    expect(cancel.status).toBe(200);
    expect(cancel.body.status).toBe('cancelled');
    const result = await call('alice', 'GET', `/v1/jobs/${id}/result`);
    expect(result.status).toBe(409);
    expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(result.body).toMatchObject({ status: 409, jobStatus: 'cancelled' });
    expect((await call('alice', 'POST', `/v1/jobs/${id}:cancel`)).status).toBe(409);
    const del = await call('alice', 'DELETE', `/v1/jobs/${id}`);
    expect(del.status).toBe(200);
    expect(del.body.status).toBe('cancelled');
  });

  it('DELETE cancels a running job', async () => {
    const { body } = await post('sleep', { seconds: 30 });
    const del = await call('alice', 'DELETE', `/v1/jobs/${body.taskId}`);
    expect(del.status).toBe(200);
    expect(del.body.status).toBe('cancelled');
  });

  it('input_required is answered with :input; a rejected job is failed (reason rejected) with no result', async () => {
    const a = await post('approval', { action: 'Deploy v2' });
    const id = a.body.taskId as string;
    const waiting = await pollUntil(id, 'input_required');
    expect(waiting.statusMessage).toContain('Deploy v2');
    const answered = await call('alice', 'POST', `/v1/jobs/${id}:input`, {
      body: { data: { decision: 'approve' } },
    });
    expect(answered.status).toBe(200);
    expect((await pollUntil(id, 'completed')).statusMessage).toContain('Approved');
    const again = await call('alice', 'POST', `/v1/jobs/${id}:input`, { body: { text: 'approve' } });
    expect(again.status).toBe(409);

    const b = await post('approval', { action: 'Drop the database' });
    await pollUntil(b.body.taskId, 'input_required');
    await call('alice', 'POST', `/v1/jobs/${b.body.taskId}:input`, { body: { text: 'reject' } });
    const failed = await pollUntil(b.body.taskId, 'failed');
    expect(failed).toMatchObject({ reason: 'rejected', state: 'rejected' });
    const result = await call('alice', 'GET', `/v1/jobs/${b.body.taskId}/result`);
    expect(result.status).toBe(409);
    expect(result.body.jobStatus).toBe('failed');
    const bad = await call('alice', 'POST', `/v1/jobs/${b.body.taskId}:input`, { body: { nope: 1 } });
    expect(bad.status).toBe(400);
    expect((await call('alice', 'POST', `/v1/jobs/${b.body.taskId}:frobnicate`)).status).toBe(404);
  });

  it('an approver the job names answers it with :input, and sees its status only', async () => {
    const { body } = await post('approval', { action: 'Rotate keys', approver: 'acme/bob' });
    const id = body.taskId as string;
    await pollUntil(id, 'input_required');
    expect((await call('bob', 'GET', `/v1/jobs/${id}`)).status).toBe(404);
    const answered = await call('bob', 'POST', `/v1/jobs/${id}:input`, {
      body: { data: { decision: 'approve' } },
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ taskId: id, status: 'working' });
    expect((await pollUntil(id, 'completed')).statusMessage).toContain('Approved by acme/bob');
  });

  it('a task made over A2A is a job, and a job is an A2A task, for the same owner', async () => {
    const task = await startTask(agent, skillMessage('sleep', { seconds: 0 }));
    await pollUntil(task.id, 'completed');
    const list = await call('alice', 'GET', '/v1/jobs?pageSize=100');
    expect(list.body.jobs.map((j: Json) => j.taskId)).toContain(task.id);

    const job = await post('sleep', { seconds: 0 });
    await agent.waitForState(job.body.taskId, 'TASK_STATE_COMPLETED');
    expect((await getTask(agent, job.body.taskId)).id).toBe(job.body.taskId);
  });

  it('another API key gets 404 everywhere; no credentials get 401 as problem+json', async () => {
    const { body } = await post('sleep', { seconds: 30 });
    const id = body.taskId as string;
    for (const [method, path, b] of [
      ['GET', `/v1/jobs/${id}`],
      ['GET', `/v1/jobs/${id}/result`],
      ['GET', `/v1/jobs/${id}/events`],
      ['POST', `/v1/jobs/${id}:cancel`],
      ['POST', `/v1/jobs/${id}:input`, { text: 'hi' }],
      ['DELETE', `/v1/jobs/${id}`],
    ] as const) {
      const r = await call('bob', method, path, { body: b });
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await call('bob', 'GET', '/v1/jobs')).body.jobs).toEqual([]);
    const anon = await call({}, 'POST', '/v1/jobs', { body: { skill: 'sleep', input: {} } });
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toBeTruthy();
    expect(anon.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await call({}, 'GET', `/v1/jobs/${id}`)).status).toBe(401);
    await call('alice', 'DELETE', `/v1/jobs/${id}`);
  });

  it('refuses bad bodies and unknown skills with a problem naming the field', async () => {
    const noSkill = await call('alice', 'POST', '/v1/jobs', { body: { input: {} } });
    expect(noSkill.status).toBe(400);
    expect(noSkill.body.detail).toContain('skill');
    const unknown = await post('nope', {});
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toContain('Unknown skill');
    const badInput = await post('sleep', { seconds: -1 });
    expect(badInput.status).toBe(400);
    expect(badInput.body.detail).toContain('input.seconds');
    const notJson = await call('alice', 'POST', '/v1/jobs', {
      body: 'x',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(notJson.status).toBe(415);
  });

  it('Prefer: wait=N answers 200 with the result when done in time, 202 otherwise; respond-async is 202', async () => {
    const quick = await post('export', { rows: 5 }, { Prefer: 'wait=10' });
    expect(quick.status).toBe(200);
    expect(quick.headers.get('preference-applied')).toBe('wait=10');
    expect(quick.headers.get('location')).toBe(`/v1/jobs/${quick.body.taskId}`);
    expect(quick.body.status).toBe('completed');
    expect(quick.body.artifacts).toHaveLength(1);

    const capped = await post('sleep', { seconds: 0 }, { Prefer: 'wait=3600' });
    expect(capped.headers.get('preference-applied')).toBe('wait=60');

    const started = Date.now();
    const slow = await post('sleep', { seconds: 30 }, { Prefer: 'wait=1' });
    expect(slow.status).toBe(202);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(slow.headers.get('preference-applied')).toBe('wait=1');

    const async = await post('sleep', { seconds: 0 }, { Prefer: 'respond-async, wait=10' });
    expect(async.status).toBe(202);
    expect(async.headers.get('preference-applied')).toBe('respond-async');
    await call('alice', 'DELETE', `/v1/jobs/${slow.body.taskId}`);
  });

  it('Idempotency-Key: a replay is the same 202 and task; another payload is 422; a race makes one task', async () => {
    const key = crypto.randomUUID();
    const first = await post('sleep', { seconds: 0 }, { 'Idempotency-Key': key });
    const replay = await post('sleep', { seconds: 0 }, { 'Idempotency-Key': key });
    expect(first.status).toBe(202);
    expect(replay.status).toBe(202);
    expect(replay.body.taskId).toBe(first.body.taskId);
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    const other = await post('sleep', { seconds: 1 }, { 'Idempotency-Key': key });
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    // Another caller's key is its own.
    const bobs = await post('sleep', { seconds: 0 }, { 'Idempotency-Key': key }, 'bob');
    expect(bobs.status).toBe(202);
    expect(bobs.body.taskId).not.toBe(first.body.taskId);

    for (let round = 0; round < 5; round++) {
      const raceKey = crypto.randomUUID();
      const replies = await Promise.all(
        Array.from({ length: 4 }, () => post('sleep', { seconds: 0 }, { 'Idempotency-Key': raceKey })),
      );
      for (const r of replies) expect([202, 409]).toContain(r.status);
      const ids = new Set(replies.filter((r) => r.status === 202).map((r) => r.body.taskId));
      expect(ids.size).toBe(1);
      const retry = await post('sleep', { seconds: 0 }, { 'Idempotency-Key': raceKey });
      expect(retry.status).toBe(202);
      expect(ids.has(retry.body.taskId)).toBe(true);
    }
  });

  it('GET /v1/jobs pages through the caller’s jobs', async () => {
    const page1 = await call('alice', 'GET', '/v1/jobs?pageSize=1');
    expect(page1.status).toBe(200);
    expect(page1.body.jobs).toHaveLength(1);
    expect(page1.body.nextPageToken).not.toBe('');
    const page2 = await call('alice', 'GET', `/v1/jobs?pageSize=1&pageToken=${page1.body.nextPageToken}`);
    expect(page2.body.jobs).toHaveLength(1);
    expect(page2.body.jobs[0].taskId).not.toBe(page1.body.jobs[0].taskId);
    expect((await call('alice', 'GET', '/v1/jobs?pageSize=0')).status).toBe(400);
  });

  it('events: SSE with ids, the document after each event, ending at the terminal state; Last-Event-ID replays', async () => {
    const { body } = await post('export', { rows: 30, chunkRows: 10, delayMs: 100 });
    const id = body.taskId as string;
    const stream = await openSse(`${agent.url}/v1/jobs/${id}/events`, { headers: agent.credentials });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await stream.rest(15_000);
    expect(events.length).toBeGreaterThan(3);
    const ids = events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    for (const e of events) expect(e.data.job.taskId).toBe(id);
    expect(events.at(-1)?.data.job.status).toBe('completed');
    expect(events.some((e) => e.data.job.progress?.percent !== undefined)).toBe(true);

    const from = ids[1] as number;
    const replay = await openSse(`${agent.url}/v1/jobs/${id}/events`, {
      headers: { ...agent.credentials, 'Last-Event-ID': String(from) },
    });
    const replayed = await replay.rest(5_000);
    expect(replayed.map((e) => Number(e.id))).toEqual(ids.filter((n) => n > from));
    expect(replayed.at(-1)?.data.job.status).toBe('completed');
  });

  it('events follow a job through input_required in one stream, to its end', async () => {
    const { body } = await post('approval', { action: 'Ship it' });
    const id = body.taskId as string;
    const stream = await openSse(`${agent.url}/v1/jobs/${id}/events`, { headers: agent.credentials });
    await pollUntil(id, 'input_required');
    await call('alice', 'POST', `/v1/jobs/${id}:input`, { body: { data: { decision: 'approve' } } });
    const events = await stream.rest(15_000);
    const statuses = events.map((e) => e.data.job.status);
    expect(statuses).toContain('input_required');
    expect(statuses.at(-1)).toBe('completed');
  });

  it('serves an OpenAPI 3.1 document that declares every answer the tests saw', async () => {
    const res = await fetch(`${agent.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Json;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(seen.length).toBeGreaterThan(50);
    const problems: string[] = [];
    // An unknown method is deliberately outside the API (its 404 is the router's fallback).
    for (const s of seen.filter((x) => !x.path.endsWith(':frobnicate'))) {
      const template = templateOf(s.path);
      const op = doc.paths[template]?.[s.method.toLowerCase()];
      if (!op) {
        problems.push(`${s.method} ${template}: not declared`);
        continue;
      }
      const response = op.responses[String(s.status)];
      if (!response) {
        problems.push(`${s.method} ${template} ${s.status}: status not declared`);
        continue;
      }
      if (!response.content) continue;
      const mediaType = s.contentType.split(';')[0]?.trim() ?? '';
      const media = response.content[mediaType];
      if (!media) {
        problems.push(`${s.method} ${template} ${s.status}: ${mediaType} not declared`);
        continue;
      }
      for (const name of missing(doc, media.schema, s.body as Json)) {
        problems.push(`${s.method} ${template} ${s.status}: no "${name}"`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('/v1/jobs: admission like the A2A face', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: { RATE_LIMIT_PER_S: '1', RATE_LIMIT_BURST: '2' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('answers 429 with Retry-After past the rate, and lists nothing for anonymous callers', async () => {
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${agent.url}/v1/jobs`);
      statuses.push(res.status);
      if (res.status === 429) limited = res;
      else expect(await res.json()).toEqual({ jobs: [], nextPageToken: '' });
    }
    expect(statuses).toContain(429);
    expect(limited?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited?.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});

/** The OpenAPI path template of a request path. */
function templateOf(path: string): string {
  return path
    .replace(/^\/v1\/jobs\/[^/:]+:(\w+)$/, '/v1/jobs/{id}:$1')
    .replace(/^\/v1\/jobs\/[^/:]+\/(result|events)$/, '/v1/jobs/{id}/$1')
    .replace(/^\/v1\/jobs\/[^/:{]+$/, '/v1/jobs/{id}');
}

/** The properties a schema requires that `body` lacks (following $ref, allOf and oneOf). */
function missing(doc: Json, schema: Json | undefined, body: Json): string[] {
  if (!schema) return [];
  if (schema.$ref) {
    const name = String(schema.$ref).split('/').at(-1) ?? '';
    return missing(doc, doc.components.schemas[name], body);
  }
  const alternatives = (schema.oneOf ?? schema.anyOf) as Json[] | undefined;
  if (alternatives) {
    const misses = alternatives.map((s) => missing(doc, s, body));
    return misses.find((m) => m.length === 0) ?? misses[0] ?? [];
  }
  const own = ((schema.required as string[] | undefined) ?? []).filter((name) => !(name in body));
  const all = ((schema.allOf as Json[] | undefined) ?? []).flatMap((s) => missing(doc, s, body));
  return [...own, ...all];
}
