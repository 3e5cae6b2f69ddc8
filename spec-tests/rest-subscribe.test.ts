import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, skillMessage, startTask } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { openSse, type SseEvent } from './sse.js';

/**
 * v1.0 REST `GET|POST /tasks/{id}:subscribe`, served straight from the engine's subscription
 * (rest-subscribe.ts); a path with a tenant still takes the SDK's router over our request handler,
 * and both must say the same: the events, their ids, the refusals with their statuses and bodies.
 */
describe('REST subscribe (v1.0)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'acme', carol: 'acme' },
      env: { MAX_STREAMS: '2', SSE_KEEPALIVE_MS: '60000' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const headers = (who: string, extra: Record<string, string> = {}) => ({
    'A2A-Version': '1.0',
    ...agent.as(who).credentials,
    ...extra,
  });
  const subscribe = (who: string, id: string, extra: Record<string, string> = {}, path = '') =>
    openSse(`${agent.url}/rest${path}/tasks/${encodeURIComponent(id)}:subscribe`, {
      headers: headers(who, extra),
    });
  const slowExport = (rows: number) => skillMessage('export', { rows, chunkRows: 1, delayMs: 120 });
  const refusal = async (
    who: string,
    id: string,
    extra: Record<string, string> = {},
    path = '',
    // biome-ignore lint/suspicious/noExplicitAny: refusal bodies are inspected freely in tests
  ): Promise<any> => {
    const res = await fetch(`${agent.url}/rest${path}/tasks/${encodeURIComponent(id)}:subscribe`, {
      headers: headers(who, extra),
    });
    return {
      status: res.status,
      type: res.headers.get('content-type'),
      retryAfter: res.headers.get('retry-after'),
      body: await res.json(),
    };
  };

  it('writes what the SDK router writes for the same task: events, ids, the end', async () => {
    const task = await startTask(agent.as('alice'), slowExport(5));
    const [direct, viaSdk] = await Promise.all([
      subscribe('alice', task.id),
      subscribe('alice', task.id, {}, '/t1'),
    ]);
    for (const s of [direct, viaSdk]) {
      expect(s.status).toBe(200);
      expect(s.headers.get('content-type')).toBe('text/event-stream');
      expect(s.headers.get('cache-control')).toBe('no-cache');
    }
    const [a, b] = await Promise.all([direct.rest(), viaSdk.rest()]);
    expect(a[0]?.data.task.id).toBe(task.id);
    expect(a.at(-1)?.data.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(a.every((e) => e.event === undefined && e.id !== undefined)).toBe(true);
    // The two snapshots may be taken at different points of the log; from the later one on, the same.
    const from = Math.max(Number(a[0]?.id), Number(b[0]?.id));
    const tail = (events: SseEvent[]) => events.filter((e) => Number(e.id) > from).map((e) => [e.id, e.data]);
    expect(tail(a)).toEqual(tail(b));
    expect(tail(a).length).toBeGreaterThan(0);
  });

  it("refuses an unknown task, another owner's and a finished one as the SDK router does", async () => {
    const task = await startTask(agent.as('alice'), skillMessage('sleep', { seconds: 30 }));
    const { body } = await agent
      .as('alice')
      .rpc('SendMessage', { message: skillMessage('export', { rows: 1 }) }, { version: '1.0' });
    const done = body.result.task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    const cases: [string, string, number, string, Record<string, string>][] = [
      ['alice', 'no-such-task', 404, 'NOT_FOUND', {}],
      ['bob', task.id, 404, 'NOT_FOUND', {}],
      ['alice', done.id, 400, 'FAILED_PRECONDITION', {}],
      // Not a sequence number: no resume point, so a finished task is refused as without one.
      ['alice', done.id, 400, 'FAILED_PRECONDITION', { 'Last-Event-ID': 'abc' }],
      ['alice', 'no-such-task', 404, 'NOT_FOUND', { 'Last-Event-ID': '3' }],
    ];
    for (const [who, id, status, canonical, extra] of cases) {
      const direct = await refusal(who, id, extra);
      const viaSdk = await refusal(who, id, extra, '/t1');
      expect([direct.status, direct.body.error.status], id).toEqual([status, canonical]);
      expect(direct.type).toBe('application/a2a+json; charset=utf-8');
      expect(direct).toEqual(viaSdk);
    }
    await agent.as('alice').rpc('CancelTask', { id: task.id }, { version: '1.0' });
  });

  it('a bad Last-Event-ID is no resume point; a resume replays what followed, and after the end nothing', async () => {
    const { body } = await agent
      .as('alice')
      .rpc('SendMessage', { message: skillMessage('export', { rows: 2, chunkRows: 1 }) }, { version: '1.0' });
    const done = body.result.task;
    for (const bad of ['abc', '-1', '1.5']) {
      const r = await refusal('alice', done.id, { 'Last-Event-ID': bad });
      expect(r.status, bad).toBe(400);
    }
    const replay = await subscribe('alice', done.id, { 'Last-Event-ID': '2' });
    const events = await replay.rest();
    expect(events.map((e) => Number(e.id))[0]).toBe(3);
    expect(events.some((e) => e.data.task)).toBe(false);
    expect(events.at(-1)?.data.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    const tail = await subscribe('alice', done.id, { 'Last-Event-ID': events.at(-1)?.id as string });
    expect(tail.status).toBe(200);
    expect(await tail.rest()).toEqual([]);
  });

  it('a resume of a quiet task opens at once and follows the task to its end', async () => {
    const task = await startTask(agent.as('alice'), skillMessage('sleep', { seconds: 30 }));
    await agent.as('alice').waitForState(task.id, 'TASK_STATE_WORKING');
    const first = await subscribe('alice', task.id);
    const lastEventId = (await first.next())?.id as string;
    first.close();
    // Its headers come before any event: there is none until the cancel below.
    const resumed = await subscribe('alice', task.id, { 'Last-Event-ID': lastEventId });
    expect(resumed.headers.get('content-type')).toBe('text/event-stream');
    await agent.as('alice').rpc('CancelTask', { id: task.id }, { version: '1.0' });
    const events = await resumed.rest();
    expect(events.at(-1)?.data.statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('past MAX_STREAMS a 429 with Retry-After, as the SDK router says it; a client that leaves frees its slot', async () => {
    const task = await startTask(agent.as('carol'), skillMessage('sleep', { seconds: 30 }));
    const held = [await subscribe('carol', task.id), await subscribe('carol', task.id)];
    for (const s of held) expect((await s.next())?.data.task.id).toBe(task.id);
    const direct = await refusal('carol', task.id);
    const viaSdk = await refusal('carol', task.id, {}, '/t1');
    expect([direct.status, direct.retryAfter, direct.body.error.status]).toEqual([
      429,
      '5',
      'RESOURCE_EXHAUSTED',
    ]);
    expect(direct.body.error.message).toMatch(/MAX_STREAMS/);
    expect(direct).toEqual(viaSdk);
    held[0]?.close();
    const again = await eventually(async () => {
      const s = await subscribe('carol', task.id);
      if (s.status === 200) return s;
      return undefined;
    });
    expect((await again.next())?.data.task.id).toBe(task.id);
    again.close();
    held[1]?.close();
    await agent.as('carol').rpc('CancelTask', { id: task.id }, { version: '1.0' });
  });
});

describe('REST subscribe at shutdown', () => {
  it('an open stream ends when the server stops', async () => {
    const agent = await launch({ env: { SSE_KEEPALIVE_MS: '60000' } });
    try {
      const task = await startTask(agent, skillMessage('sleep', { seconds: 30 }));
      const stream = await openSse(`${agent.url}/rest/tasks/${task.id}:subscribe`, {
        headers: { 'A2A-Version': '1.0' },
      });
      expect((await stream.next())?.data.task.id).toBe(task.id);
      const stopped = agent.stop();
      // The server ends the response itself (after what the shutdown wrote of the task, if anything).
      const events = await stream.rest();
      expect(events.every((e) => e.data.statusUpdate?.taskId === task.id)).toBe(true);
      expect(await stopped).toBe(0);
    } finally {
      await agent.stop();
    }
  });
});
