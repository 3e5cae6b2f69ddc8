import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, V1 } from './a2a.js';
import { type Cluster, startCluster } from './cluster.js';
import { type Agent, launch } from './harness.js';
import { conforms, SubscriptionsListenResult, TaskStatusNotification } from './mcp-2026-schema.js';
import { type Json, listen, modern, SUBSCRIPTION_ID } from './mcp-modern.js';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from './postgres.js';
import type { SseEvent, SseStream } from './sse.js';
import { type Receiver, startReceiver } from './webhook-receiver.js';

/**
 * `subscriptions/listen` with the Tasks extension's `taskIds` (MCP 2026-07-28, SEP-2663): a
 * client hears its tasks' status changes as `notifications/tasks` instead of polling `tasks/get`.
 */
const noPostgres = await skipWithoutPostgres();
const STORES: { store: string; env: Record<string, string>; skip: boolean }[] = [
  { store: 'SQLite', env: {}, skip: false },
  {
    store: 'PostgreSQL',
    env: { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: freshSchema() },
    skip: noPostgres !== undefined,
  },
];

/** Reads a listen stream until a notification of `taskId` in `status`: the events read, that one last. */
async function untilStatus(stream: SseStream, taskId: string, status: string): Promise<SseEvent[]> {
  const seen: SseEvent[] = [];
  for (;;) {
    const e = await stream.next();
    if (!e) throw new Error(`stream ended before ${taskId} was ${status}: ${JSON.stringify(seen)}`);
    seen.push(e);
    if (e.data.method === 'notifications/tasks' && e.data.params.taskId === taskId) {
      if (e.data.params.status === status) return seen;
    }
  }
}

const statuses = (events: SseEvent[]) =>
  events.filter((e) => e.data.method === 'notifications/tasks').map((e) => e.data.params.status);

/** Answers a waiting approval task as its owner, with the key its tasks/get shows. */
async function approve(agent: Agent, key: string, taskId: string): Promise<void> {
  const waiting = await eventually(async () => {
    const { result } = (await modern(agent, 'tasks/get', { taskId }, { key })).body;
    return result.status === 'input_required' ? result : undefined;
  });
  const ask = Object.keys(waiting.inputRequests)[0] as string;
  const { body } = await modern(
    agent,
    'tasks/update',
    { taskId, inputResponses: { [ask]: { action: 'accept', content: { decision: 'approve' } } } },
    { key },
  );
  expect(body.result.resultType).toBe('complete');
}

describe.each(STORES)('MCP subscriptions/listen for task notifications ($store)', ({ env, skip }) => {
  let agent: Agent;
  let keys: Record<string, string>;
  const create = async (name: string, args: Json, key = keys.alice as string) => {
    const { body } = await modern(agent, 'tools/call', { name, arguments: args }, { key });
    expect(body.result.resultType).toBe('task');
    return body.result.taskId as string;
  };

  beforeAll(async () => {
    if (skip) return;
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'acme', dave: 'acme' },
      env: { ...env, MAX_STREAMS: '2' },
    });
    keys = agent.keys;
  });
  afterAll(async () => {
    await agent?.stop();
    if (!skip && env.DATABASE_SCHEMA) await dropSchema(env.DATABASE_SCHEMA);
  });
  beforeEach(({ skip: skipTest }) => {
    if (skip) skipTest();
  });

  it('follows only the caller’s own tasks: acknowledged, each at once as it stands, each change, then the listen’s result', async () => {
    const alice = keys.alice as string;
    const mine = await create('approval', { action: 'Deploy v3' });
    const bobs = await create('sleep', { seconds: 600 }, keys.bob);
    const { id, stream } = await listen(
      agent,
      { taskIds: [mine, bobs, 'no-such-task', mine] },
      { key: alice },
    );
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const ack = await stream.next();
    // Bob's task and a missing one are left out alike; the repeat is one.
    expect(ack?.data).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_ID]: id }, notifications: { taskIds: [mine] } },
    });
    const asked = await untilStatus(stream, mine, 'input_required');
    const question = conforms(TaskStatusNotification, asked.at(-1)?.data).params as Json;
    expect(Object.values(question.inputRequests)).toHaveLength(1);
    await approve(agent, alice, mine);
    const rest = await stream.rest();
    const notifications = [...asked, ...rest].filter((e) => e.data.method === 'notifications/tasks');
    // Only alice's task, every notification a DetailedTask carrying the subscription's id.
    for (const n of notifications) {
      conforms(TaskStatusNotification, n.data);
      expect(n.data.params.taskId).toBe(mine);
      expect(n.data.params._meta[SUBSCRIPTION_ID]).toBe(id);
    }
    expect(statuses(notifications).at(-1)).toBe('completed');
    expect(notifications.at(-1)?.data.params.result.content[0].text).toBe('Approved by acme/alice');
    // Every event has an id to resume from, but the listen's result, which ends it.
    for (const e of [ack, ...asked, ...rest.slice(0, -1)]) expect(e?.id).toMatch(/^tl1\./);
    const end = rest.at(-1)?.data;
    expect(end.id).toBe(id);
    expect(conforms(SubscriptionsListenResult, end.result)._meta[SUBSCRIPTION_ID]).toBe(id);
    await modern(agent, 'tasks/cancel', { taskId: bobs }, { key: keys.bob });
  });

  it('a task’s approver hears nothing of it: not acknowledged, as a missing one; its answer’s ack is its receipt', async () => {
    const taskId = await create('approval', { action: 'Ship it', approver: 'acme/bob' });
    await eventually(async () => {
      const { result } = (await modern(agent, 'tasks/get', { taskId }, { key: keys.alice })).body;
      return result.status === 'input_required' || undefined;
    });
    const { id, stream } = await listen(agent, { taskIds: [taskId] }, { key: keys.bob });
    const events = await stream.rest();
    expect(events.map((e) => e.data)).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: { _meta: { [SUBSCRIPTION_ID]: id }, notifications: { taskIds: [] } },
      },
      { jsonrpc: '2.0', id, result: expect.objectContaining({ resultType: 'complete' }) },
    ]);
    const { body } = await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { any: { action: 'accept', content: { answer: 'approve' } } } },
      { key: keys.bob },
    );
    expect(body.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
  });

  it('is refused before any stream: without the Tasks extension -32021, without SSE 406, bad params -32602, under 2025-11-25 -32601', async () => {
    const alice = keys.alice as string;
    const taskId = await create('sleep', { seconds: 0 });
    const noExtension = await modern(
      agent,
      'subscriptions/listen',
      { notifications: { taskIds: [taskId] } },
      { key: alice, tasks: false },
    );
    expect(noExtension.status).toBe(400);
    expect(noExtension.body.error).toEqual({
      code: -32021,
      message: expect.stringContaining('io.modelcontextprotocol/tasks'),
      data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
    });
    const jsonOnly = await modern(
      agent,
      'subscriptions/listen',
      { notifications: { taskIds: [taskId] } },
      { key: alice, headers: { Accept: 'application/json' } },
    );
    expect([jsonOnly.status, jsonOnly.body.error.code]).toEqual([406, -32600]);
    expect(jsonOnly.body.error.message).toContain('text/event-stream');
    for (const notifications of [undefined, { taskIds: taskId }, { taskIds: Array(101).fill(taskId) }]) {
      const bad = await modern(agent, 'subscriptions/listen', { notifications }, { key: alice });
      expect(bad.body.error.code).toBe(-32602);
      expect(bad.body.error.message).toMatch(/params\.notifications/);
    }
    const legacy = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${alice}`,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'subscriptions/listen',
        params: { notifications: { taskIds: [taskId] } },
      }),
    });
    expect(((await legacy.json()) as Json).error.code).toBe(-32601);
  });

  it('counts as one of the caller’s streams (MAX_STREAMS), whatever its tasks: past that it is refused until one closes', async () => {
    const dave = keys.dave as string;
    const a = await create('sleep', { seconds: 600 }, dave);
    const b = await create('sleep', { seconds: 600 }, dave);
    const first = await listen(agent, { taskIds: [a, b] }, { key: dave });
    const second = await listen(agent, { taskIds: [a] }, { key: dave });
    await first.stream.next();
    await second.stream.next();
    const third = await modern(
      agent,
      'subscriptions/listen',
      { notifications: { taskIds: [b] } },
      { key: dave },
    );
    expect(third.body.error).toMatchObject({ code: -32600, data: { reason: 'too-many-streams' } });
    expect(third.body.error.message).toContain('MAX_STREAMS');
    // Another caller's bound is its own.
    const alices = await listen(agent, { taskIds: [] }, { key: keys.alice });
    expect((await alices.stream.rest()).length).toBe(2);
    first.stream.close();
    const again = await eventually(async () => {
      const l = await listen(agent, { taskIds: [b] }, { key: dave });
      if (l.stream.status === 200 && l.stream.headers.get('content-type')?.includes('text/event-stream'))
        return l;
      await l.stream.rest().catch(() => []);
      return undefined;
    });
    expect((await again.stream.next())?.data.params.notifications.taskIds).toEqual([b]);
    again.stream.close();
    second.stream.close();
    for (const taskId of [a, b]) await modern(agent, 'tasks/cancel', { taskId }, { key: dave });
  });

  it('resumes from Last-Event-ID: only what changed after that event; an id of another listen is 400', async () => {
    const alice = keys.alice as string;
    const taskId = await create('approval', { action: 'Resume me' });
    const other = await create('sleep', { seconds: 600 });
    const taskIds = [taskId, other];
    const first = await listen(agent, { taskIds }, { key: alice });
    const seen = await untilStatus(first.stream, taskId, 'input_required');
    // The other task's state came at once too, before or after: read on until both are in.
    const of = (id: string) => seen.some((e) => e.data.params?.taskId === id);
    if (!of(other)) seen.push(...(await untilStatus(first.stream, other, 'working')));
    const lastId = seen.at(-1)?.id as string;
    first.stream.close();
    await approve(agent, alice, taskId);
    await eventually(async () => {
      const { result } = (await modern(agent, 'tasks/get', { taskId }, { key: alice })).body;
      return result.status === 'completed' || undefined;
    });
    const resumed = await listen(agent, { taskIds }, { key: alice, headers: { 'Last-Event-ID': lastId } });
    const ack = await resumed.stream.next();
    expect(ack?.data.params.notifications.taskIds).toEqual(taskIds);
    const next = (await resumed.stream.next()) as SseEvent;
    const after =
      next.data.params.status === 'completed'
        ? [next]
        : [next, ...(await untilStatus(resumed.stream, taskId, 'completed'))];
    // Not the states the client had (input_required, the other's working): only the changes after them.
    expect(after.map((e) => e.data.params.taskId)).toEqual(after.map(() => taskId));
    expect(statuses(after)).not.toContain('input_required');
    resumed.stream.close();
    const mismatched = await modern(
      agent,
      'subscriptions/listen',
      { notifications: { taskIds: [other] } },
      { key: alice, headers: { 'Last-Event-ID': lastId } },
    );
    expect([mismatched.status, mismatched.body.error.code]).toEqual([400, -32600]);
    expect(mismatched.body.error.message).toContain('same notifications.taskIds');
    await modern(agent, 'tasks/cancel', { taskId: other }, { key: alice });
  });
});

describe.skipIf(noPostgres !== undefined)(
  'MCP subscriptions/listen across two instances on one PostgreSQL',
  () => {
    let cluster: Cluster;
    let key: string;
    beforeAll(async () => {
      cluster = await startCluster(2, { apiKeys: { alice: 'acme' } });
      key = cluster.agents[0]?.keys.alice as string;
    });
    afterAll(() => cluster?.close());

    it('a listen on one instance hears changes made through the other, and resumes there from its last event id', async () => {
      const [a, b] = cluster.agents as [Agent, Agent];
      const created = await modern(
        a,
        'tools/call',
        { name: 'approval', arguments: { action: 'Two places' } },
        { key },
      );
      const taskId = created.body.result.taskId as string;
      const onB = await listen(b, { taskIds: [taskId] }, { key });
      const asked = await untilStatus(onB.stream, taskId, 'input_required');
      // Answered through A: B's stream hears it, from the store's notifications.
      await approve(a, key, taskId);
      const rest = await onB.stream.rest();
      expect(statuses(rest).at(-1)).toBe('completed');
      expect(rest.at(-1)?.data.result._meta[SUBSCRIPTION_ID]).toBe(onB.id);

      // B's stream, lost after the question, resumed on A: only what came after.
      const resumed = await listen(
        a,
        { taskIds: [taskId] },
        { key, headers: { 'Last-Event-ID': asked.at(-1)?.id as string } },
      );
      const events = await resumed.stream.rest();
      expect(statuses(events)).not.toContain('input_required');
      expect(statuses(events).at(-1)).toBe('completed');
      expect(events.at(-1)?.data.result.resultType).toBe('complete');
    });
  },
);

describe('MCP subscriptions/listen at shutdown', () => {
  it('ends with the listen’s result, as a server that ends a subscription should: the client may listen again', async () => {
    const agent = await launch({ apiKeys: { alice: 'acme' } });
    const key = agent.keys.alice as string;
    const created = await modern(
      agent,
      'tools/call',
      { name: 'sleep', arguments: { seconds: 600 } },
      { key },
    );
    const { id, stream } = await listen(agent, { taskIds: [created.body.result.taskId] }, { key });
    await untilStatus(stream, created.body.result.taskId, 'working');
    const [rest] = await Promise.all([stream.rest(), agent.stop()]);
    expect(rest.at(-1)?.data).toEqual({
      jsonrpc: '2.0',
      id,
      result: { resultType: 'complete', _meta: expect.objectContaining({ [SUBSCRIPTION_ID]: id }) },
    });
  });
});

describe('push configs for MCP callers: registered over A2A, for the same task ids', () => {
  let agent: Agent;
  let hook: Receiver;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { PUSH_ALLOW: '127.0.0.0/8', PUSH_POLL_MS: '50' },
    });
    hook = await startReceiver();
  });
  afterAll(async () => {
    await agent?.stop();
    await hook?.close();
  });

  it('a task made over MCP takes a webhook through CreateTaskPushNotificationConfig, with the same credentials: signed, sent at its end', async () => {
    const key = agent.keys.alice as string;
    const created = await modern(
      agent,
      'tools/call',
      { name: 'approval', arguments: { action: 'Hook me' } },
      { key },
    );
    const taskId = created.body.result.taskId as string;
    // agent.rpc calls as alice too (her X-API-Key): the same owner as the MCP call's Bearer key.
    const config = await agent.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId, url: hook.url('/mcp-hook') },
      V1,
    );
    expect(config.body.result).toMatchObject({ id: 'default', taskId, url: hook.url('/mcp-hook') });
    await approve(agent, key, taskId);
    const [done] = await hook
      .waitFor((all) =>
        all.some((r) => JSON.parse(r.body).statusUpdate?.status.state === 'TASK_STATE_COMPLETED'),
      )
      .then((all) =>
        all.filter((r) => JSON.parse(r.body).statusUpdate?.status.state === 'TASK_STATE_COMPLETED'),
      );
    if (!done) throw new Error('no completed notification');
    expect(await hook.verify(agent.url, done)).toMatchObject({ taskId });
  });
});
