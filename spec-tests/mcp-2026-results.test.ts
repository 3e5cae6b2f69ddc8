import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './a2a.js';
import { type Agent, hashApiKey, launch, newApiKey } from './harness.js';
import {
  Acknowledgement,
  CallToolResult,
  CreateTaskResult,
  conforms,
  DiscoverResult,
  ErrorResponse,
  GetTaskResult,
  ListToolsResult,
  SubscriptionsAcknowledgedNotification,
  SubscriptionsListenResult,
  TaskStatusNotification,
} from './mcp-2026-schema.js';
import { type Json, listen, modern } from './mcp-modern.js';

/**
 * Every result type of MCP 2026-07-28 (and of its Tasks extension, SEP-2663) that /mcp answers
 * with, each request sent under that revision and its answer checked against the schema's required
 * fields and types (mcp-2026-schema.ts); the older revisions keep their shapes.
 */
function keysFile() {
  const dir = mkdtempSync(join(tmpdir(), 'taskhandle-mcp2026-'));
  const file = join(dir, 'api-keys.json');
  const keys = { alice: newApiKey(), ops: newApiKey(), bob: newApiKey() };
  const entries = [
    { principal: 'alice', tenant: 'acme', keyHash: hashApiKey(keys.alice) },
    { principal: 'ops', tenant: 'acme', keyHash: hashApiKey(keys.ops), skills: ['sleep'] },
    { principal: 'bob', tenant: 'acme', keyHash: hashApiKey(keys.bob) },
  ];
  writeFileSync(file, JSON.stringify(entries), { mode: 0o600 });
  return { file, keys };
}

describe('MCP 2026-07-28: every result answered has the schema’s required fields', () => {
  let agent: Agent;
  let keys: ReturnType<typeof keysFile>['keys'];
  const as = (key: string) => ({ key });
  const result = async (method: string, params: Json, key = keys.alice) => {
    const { status, body } = await modern(agent, method, params, as(key));
    expect(status).toBe(200);
    return body.result as Json;
  };
  const create = async (name: string, args: Json) =>
    conforms(CreateTaskResult, await result('tools/call', { name, arguments: args })).taskId;
  const until = (taskId: string, status: string) =>
    eventually(async () => {
      const r = await result('tasks/get', { taskId });
      return r.status === status ? r : undefined;
    });

  beforeAll(async () => {
    const made = keysFile();
    keys = made.keys;
    agent = await launch({ as: null, env: { API_KEYS_FILE: made.file } });
  });
  afterAll(() => agent?.stop());

  it('server/discover: a DiscoverResult, cacheable by anyone (public) for an hour', async () => {
    const r = conforms(DiscoverResult, await result('server/discover', {}));
    expect(r).toMatchObject({ resultType: 'complete', ttlMs: 3_600_000, cacheScope: 'public' });
    expect(r.supportedVersions[0]).toBe('2026-07-28');
  });

  it('tools/list: a ListToolsResult, private (filtered per caller), its tools without 2025-11-25’s execution', async () => {
    const all = conforms(ListToolsResult, await result('tools/list', {}));
    expect(all).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'private' });
    expect(all.tools.map((t) => t.name)).toContain('export');
    for (const tool of all.tools) expect(tool).not.toHaveProperty('execution');
    // Another caller's list differs: what the scope says.
    const ops = conforms(ListToolsResult, await result('tools/list', {}, keys.ops));
    expect(ops.tools.map((t) => t.name)).toEqual(['sleep']);
    expect(ops.cacheScope).toBe('private');
  });

  it('tools/list under 2025-11-25 keeps its shape: execution on each tool, no caching fields', async () => {
    const res = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${keys.alice}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    const { result: legacy } = (await res.json()) as Json;
    expect(legacy).not.toHaveProperty('ttlMs');
    expect(legacy).not.toHaveProperty('cacheScope');
    expect(legacy).not.toHaveProperty('resultType');
    expect(legacy.tools[0].execution).toEqual({ taskSupport: 'optional' });
  });

  it('tools/call: a CreateTaskResult; tasks/get of it in every status is a GetTaskResult', async () => {
    const working = await create('sleep', { seconds: 600 });
    conforms(GetTaskResult, await until(working, 'working'));

    const waiting = await create('approval', { action: 'Deploy' });
    const asked = conforms(GetTaskResult, await until(waiting, 'input_required'));
    expect(Object.keys((asked as Json).inputRequests)).toHaveLength(1);

    const done = await create('sleep', { seconds: 0 });
    const completed = conforms(GetTaskResult, await until(done, 'completed'));
    // The task's result is the revision's CallToolResult, resultType and all.
    conforms(CallToolResult, (completed as Json).result);

    const late = await create('approval', { action: 'Quick one', deadlineHours: 0.0003 });
    conforms(GetTaskResult, await until(late, 'failed'));

    const ack = await result('tasks/cancel', { taskId: working });
    conforms(Acknowledgement, ack);
    conforms(GetTaskResult, await until(working, 'cancelled'));
  });

  it('tasks/update and tasks/cancel: empty acknowledgements with resultType "complete"', async () => {
    const taskId = await create('approval', { action: 'Ship' });
    const waiting = await until(taskId, 'input_required');
    const key = Object.keys(waiting.inputRequests)[0] as string;
    const update = await result('tasks/update', {
      taskId,
      inputResponses: { [key]: { action: 'accept', content: { decision: 'reject' } } },
    });
    conforms(Acknowledgement, update);
    // A rejection: a completed task whose CallToolResult is an error.
    const rejected = await until(taskId, 'completed');
    expect(conforms(CallToolResult, rejected.result).isError).toBe(true);
    conforms(Acknowledgement, await result('tasks/cancel', { taskId }));
  });

  it('subscriptions/listen: the acknowledgement, notifications/tasks, then a SubscriptionsListenResult', async () => {
    const taskId = await create('sleep', { seconds: 0 });
    await until(taskId, 'completed');
    const { id, stream } = await listen(agent, { taskIds: [taskId] }, as(keys.alice));
    expect(stream.status).toBe(200);
    const events = await stream.rest();
    const [ack, task, end] = events.map((e) => e.data);
    expect(events).toHaveLength(3);
    conforms(SubscriptionsAcknowledgedNotification, ack);
    expect(ack.params._meta['io.modelcontextprotocol/subscriptionId']).toBe(id);
    const notified = conforms(TaskStatusNotification, task);
    expect(notified.params).toMatchObject({ taskId, status: 'completed' });
    conforms(CallToolResult, (notified.params as Json).result);
    expect(end.id).toBe(id);
    conforms(SubscriptionsListenResult, end.result);
  });

  it('errors are JSON-RPC error responses: ping (removed by the revision) and an unknown method are 404 -32601', async () => {
    for (const method of ['ping', 'resources/list']) {
      const { status, body } = await modern(agent, method, {}, as(keys.alice));
      expect(status).toBe(404);
      expect(conforms(ErrorResponse, body).error.code).toBe(-32601);
    }
  });
});
