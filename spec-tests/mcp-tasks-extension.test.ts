import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './a2a.js';
import { type Cluster, startCluster } from './cluster.js';
import { type Agent, launch } from './harness.js';
import { modern } from './mcp-modern.js';
import { skipWithoutPostgres } from './postgres.js';

/**
 * The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) on protocol 2026-07-28, written
 * from the SEP's text and its JSON examples: no SDK speaks it yet, so these are raw requests.
 */
const EXTENSION = 'io.modelcontextprotocol/tasks';
const SERVER_INFO = { name: 'taskhandle', title: 'taskhandle', version: '0.1.0' };

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
type Json = Record<string, any>;

/** The per-request fields: the Tasks extension, and form-mode elicitation (declared unless told). */
const meta = (tasks: boolean, elicitation = true) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {
    ...(tasks ? { extensions: { [EXTENSION]: {} } } : {}),
    ...(elicitation ? { elicitation: { form: {} } } : {}),
  },
});

const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
const NOT_FOUND = {
  code: -32602,
  message: 'Failed to retrieve task: Task not found (it never existed, expired, or is not yours)',
};

describe('MCP Tasks extension (SEP-2663), raw JSON-RPC', () => {
  let agent: Agent;
  let alice: string;
  let bob: string;
  let carol: string;
  const as = (key: string) => ({ key });
  const create = async (name: string, args: Json, key = alice) => {
    const { body } = await modern(agent, 'tools/call', { name, arguments: args }, as(key));
    expect(body.result.resultType).toBe('task');
    return body.result.taskId as string;
  };
  const get = async (taskId: string, key = alice) =>
    (await modern(agent, 'tasks/get', { taskId }, as(key))).body;
  const until = (taskId: string, status: string) =>
    eventually(async () => {
      const { result } = await get(taskId);
      return result?.status === status ? result : undefined;
    });

  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'acme', carol: 'acme' } });
    ({ alice, bob, carol } = agent.keys as { alice: string; bob: string; carol: string });
  });
  afterAll(() => agent.stop());

  it('server/discover names the extension among the capabilities', async () => {
    const { status, body } = await modern(agent, 'server/discover', {}, as(alice));
    expect(status).toBe(200);
    expect(body.result).toEqual({
      resultType: 'complete',
      supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
      capabilities: { tools: {}, extensions: { [EXTENSION]: {} } },
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
      instructions: expect.any(String),
      // Cacheable (2026-07-28): the same answer for every caller.
      ttlMs: 3_600_000,
      cacheScope: 'public',
    });
  });

  it('a client without the capability gets -32021 with the required capability, and no task is made', async () => {
    const before = await (
      await fetch(`${agent.url}/v1/jobs`, { headers: { Authorization: `Bearer ${carol}` } })
    ).json();
    const { status, body } = await modern(
      agent,
      'tools/call',
      { name: 'sleep', arguments: { seconds: 0 } },
      { key: carol, tasks: false },
    );
    expect(status).toBe(400);
    expect(body.error).toEqual({
      code: -32021,
      message: expect.stringContaining(EXTENSION),
      data: { requiredCapabilities: { extensions: { [EXTENSION]: {} } } },
    });
    const after = await (
      await fetch(`${agent.url}/v1/jobs`, { headers: { Authorization: `Bearer ${carol}` } })
    ).json();
    expect(after).toEqual(before);
  });

  it('tools/call answers a CreateTaskResult once the task is committed: tasks/get resolves at once', async () => {
    const { body } = await modern(
      agent,
      'tools/call',
      { name: 'sleep', arguments: { seconds: 0 } },
      as(alice),
    );
    expect(body.result).toEqual({
      resultType: 'task',
      taskId: expect.any(String),
      status: 'working',
      createdAt: ISO,
      lastUpdatedAt: ISO,
      ttlMs: 86_400_000,
      pollIntervalMs: 1000,
      // Made queued (the runner takes it next): where it stands, as tasks/get would say then; and
      // its generation (docs/generations.md).
      _meta: {
        'io.modelcontextprotocol/serverInfo': SERVER_INFO,
        'taskhandle/generation': expect.any(Number),
        'taskhandle/queue': {
          position: expect.any(Number),
          ahead: expect.any(Number),
          reason: 'no free slot',
        },
      },
    });
    expect((await get(body.result.taskId)).result.taskId).toBe(body.result.taskId);
  });

  it('tasks/get carries progress while working, then the CallToolResult once completed', async () => {
    const taskId = await create('sleep', { seconds: 3 });
    const working = await eventually(async () => {
      const { result } = await get(taskId);
      return result.status === 'working' && result._meta?.['taskhandle/progress']?.percent > 0
        ? result
        : undefined;
    });
    expect(working).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(working).not.toHaveProperty('result');
    const done = await until(taskId, 'completed');
    expect(done).toEqual({
      resultType: 'complete',
      taskId,
      status: 'completed',
      statusMessage: 'Slept 3 s',
      createdAt: ISO,
      lastUpdatedAt: ISO,
      ttlMs: 86_400_000,
      pollIntervalMs: 1000,
      // 2026-07-28's CallToolResult, whose resultType is required.
      result: { resultType: 'complete', content: [{ type: 'text', text: 'Slept 3 s' }], isError: false },
      _meta: {
        'taskhandle/progress': { percent: 100 },
        'taskhandle/generation': expect.any(Number),
        'io.modelcontextprotocol/serverInfo': SERVER_INFO,
      },
    });
  });

  it('input_required shows the pending input request; tasks/update answers it (ack), and the task completes', async () => {
    const taskId = await create('approval', { action: 'Deploy v2' });
    const waiting = await until(taskId, 'input_required');
    const [key, ...more] = Object.keys(waiting.inputRequests);
    expect(more).toEqual([]);
    const prompt = 'Approve or reject: Deploy v2\nAnswer "approve" or "reject" (a comment may follow).';
    expect(waiting.inputRequests[key as string]).toEqual({
      method: 'elicitation/create',
      params: {
        mode: 'form',
        message: prompt,
        // The form is the skill's own answer schema (ctx.ask's), not a free-text field.
        requestedSchema: {
          type: 'object',
          properties: {
            decision: { type: 'string', enum: ['approve', 'reject'] },
            comment: { type: 'string', maxLength: 2000 },
          },
          required: ['decision'],
        },
      },
    });
    // A key that is not outstanding is ignored, as the SEP says.
    const ignored = await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { 'ask-0': { action: 'accept', content: { decision: 'reject' } } } },
      as(alice),
    );
    expect(ignored.body.result).toEqual({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
    expect((await get(taskId)).result.status).toBe('input_required');
    const { body } = await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { [key as string]: { action: 'accept', content: { decision: 'approve' } } } },
      as(alice),
    );
    expect(body.result).toEqual({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
    const done = await until(taskId, 'completed');
    expect(done.result).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Approved by acme/alice' }],
      isError: false,
    });
  });

  it('a rejection is a completed task whose result is an error (MCP keeps failed for JSON-RPC errors)', async () => {
    const taskId = await create('approval', { action: 'Drop the table' });
    const waiting = await until(taskId, 'input_required');
    const key = Object.keys(waiting.inputRequests)[0] as string;
    await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { [key]: { action: 'accept', content: { answer: 'reject: no' } } } },
      as(alice),
    );
    const done = await until(taskId, 'completed');
    expect(done.result).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Rejected by acme/alice: no' }],
      isError: true,
    });
  });

  it('a failed task carries the JSON-RPC error', async () => {
    // No answer within the input deadline (about a second): the task fails.
    const taskId = await create('approval', { action: 'Quick one', deadlineHours: 0.0003 });
    const failed = await until(taskId, 'failed');
    expect(failed).toMatchObject({
      status: 'failed',
      statusMessage: 'No answer came before the deadline',
      error: { code: -32603, message: 'No answer came before the deadline' },
    });
    expect(failed).not.toHaveProperty('result');
  });

  it('declining the input request cancels the task', async () => {
    const taskId = await create('approval', { action: 'Maybe' });
    const waiting = await until(taskId, 'input_required');
    const key = Object.keys(waiting.inputRequests)[0] as string;
    await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { [key]: { action: 'decline' } } },
      as(alice),
    );
    expect((await until(taskId, 'cancelled')).status).toBe('cancelled');
  });

  it('a client that declares no elicitation is sent no elicitation/create: it reads the question in statusMessage and _meta, and answers with tasks/update', async () => {
    const quiet = { key: alice, elicitation: false };
    const { body: created } = await modern(
      agent,
      'tools/call',
      { name: 'approval', arguments: { action: 'Quietly' } },
      quiet,
    );
    const taskId = created.result.taskId as string;
    const waiting = await eventually(async () => {
      const { result } = (await modern(agent, 'tasks/get', { taskId }, quiet)).body;
      return result?.status === 'input_required' ? result : undefined;
    });
    // "Servers MUST NOT send an inputRequests that the client has not declared support for."
    expect(waiting.inputRequests).toEqual({});
    expect(waiting.statusMessage).toBe(
      'Approve or reject: Quietly\nAnswer "approve" or "reject" (a comment may follow).',
    );
    const question = waiting._meta['taskhandle/input'];
    expect(question).toEqual({
      key: expect.stringMatching(/^ask-\d+$/),
      requestedSchema: expect.objectContaining({ required: ['decision'] }),
    });
    // The same task, asked by a client that declares elicitation, shows the request under that key.
    const declared = (await get(taskId)).result;
    expect(Object.keys(declared.inputRequests)).toEqual([question.key]);
    const update = await modern(
      agent,
      'tasks/update',
      {
        taskId,
        inputResponses: {
          [question.key]: { action: 'accept', content: { decision: 'approve', comment: 'ok' } },
        },
      },
      quiet,
    );
    expect(update.body.result.resultType).toBe('complete');
    const done = await until(taskId, 'completed');
    expect(done.result.content[0].text).toBe('Approved by acme/alice: ok');
  });

  it('cancel (the form dismissed) leaves the task waiting with its question, to answer later', async () => {
    const taskId = await create('approval', { action: 'Dismissed' });
    const waiting = await until(taskId, 'input_required');
    const key = Object.keys(waiting.inputRequests)[0] as string;
    await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { [key]: { action: 'cancel' } } },
      as(alice),
    );
    await new Promise((r) => setTimeout(r, 500));
    const still = (await get(taskId)).result;
    expect(still.status).toBe('input_required');
    expect(Object.keys(still.inputRequests)).toEqual([key]);
    await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { [key]: { action: 'accept', content: { decision: 'approve' } } } },
      as(alice),
    );
    expect((await until(taskId, 'completed')).result.isError).toBe(false);
  });

  it('a named approver answers with tasks/update and learns nothing else; anyone else is told "not found"', async () => {
    const taskId = await create('approval', { action: 'Ship it', approver: 'acme/bob' });
    await until(taskId, 'input_required');
    expect((await get(taskId, bob)).error).toEqual(NOT_FOUND);
    const stranger = await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { x: { action: 'accept', content: { answer: 'approve' } } } },
      as(carol),
    );
    expect(stranger.body.error).toEqual(NOT_FOUND);
    const missing = await modern(
      agent,
      'tasks/update',
      { taskId: 'no-such-task', inputResponses: { x: { action: 'accept', content: { answer: 'approve' } } } },
      as(carol),
    );
    expect(missing.body.error).toEqual(NOT_FOUND);
    const approver = await modern(
      agent,
      'tasks/update',
      { taskId, inputResponses: { any: { action: 'accept', content: { answer: 'approve' } } } },
      as(bob),
    );
    expect(approver.body.result).toEqual({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
    expect((await until(taskId, 'completed')).result.content[0].text).toBe('Approved by acme/bob');
  });

  it('tasks/cancel acknowledges, aborts the job, and the task shows cancelled; a missing task is -32602', async () => {
    const taskId = await create('sleep', { seconds: 600 });
    const { body } = await modern(agent, 'tasks/cancel', { taskId }, as(alice));
    expect(body.result).toEqual({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
    });
    const cancelled = await until(taskId, 'cancelled');
    expect(cancelled).not.toHaveProperty('result');
    expect(cancelled).not.toHaveProperty('error');
    // Cancelling again acknowledges too (cancellation is a signal, not a state query).
    expect((await modern(agent, 'tasks/cancel', { taskId }, as(alice))).body.result.resultType).toBe(
      'complete',
    );
    expect((await modern(agent, 'tasks/cancel', { taskId }, as(bob))).body.error).toEqual(NOT_FOUND);
    expect((await modern(agent, 'tasks/get', { taskId: 'nope' }, as(alice))).body.error).toEqual(NOT_FOUND);
  });

  it('tasks/result and tasks/list are not part of the extension: -32601 with HTTP 404, as any method 2026-07-28 lacks', async () => {
    const taskId = await create('sleep', { seconds: 0 });
    const result = await modern(agent, 'tasks/result', { taskId }, as(alice));
    expect(result.body.error.code).toBe(-32601);
    expect(result.status).toBe(404);
    const list = await modern(agent, 'tasks/list', {}, as(alice));
    expect([list.status, list.body.error.code]).toEqual([404, -32601]);
  });

  it('malformed per-request fields: no client capabilities is -32602, an unknown version -32022 (both HTTP 400)', async () => {
    const post = (m: Json) =>
      fetch(`${agent.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${alice}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: m } }),
      });
    const noCaps = await post({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' });
    expect(noCaps.status).toBe(400);
    expect(((await noCaps.json()) as Json).error.code).toBe(-32602);
    const old = await post({
      'io.modelcontextprotocol/protocolVersion': '1900-01-01',
      'io.modelcontextprotocol/clientCapabilities': {},
    });
    expect(old.status).toBe(400);
    expect(((await old.json()) as Json).error).toEqual({
      code: -32022,
      message: expect.stringContaining('1900-01-01'),
      data: { supported: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'], requested: '1900-01-01' },
    });
  });
});

describe('MCP 2026-07-28 headers: what a load balancer routes on is what runs', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme' } });
  });
  afterAll(() => agent.stop());

  const post = (headers: Record<string, string>, method: string, params: Json) =>
    fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'MCP-Protocol-Version': '2026-07-28',
        ...agent.credentials,
        ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta(true) } }),
    });

  it('a missing or different Mcp-Method or Mcp-Name is -32020 (HTTP 400), before anything runs', async () => {
    const call = { name: 'sleep', arguments: { seconds: 0 } };
    const wrong: Record<string, string>[] = [
      {},
      { 'Mcp-Method': 'tools/list', 'Mcp-Name': 'sleep' },
      { 'Mcp-Method': 'tools/call' },
      { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'export' },
    ];
    for (const headers of wrong) {
      const res = await post(headers, 'tools/call', call);
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).error).toEqual({
        code: -32020,
        message: expect.stringMatching(/^Header mismatch: /),
      });
    }
    const tasks = await (await fetch(`${agent.url}/v1/jobs`, { headers: agent.credentials })).json();
    expect(tasks).toEqual({ jobs: [], nextPageToken: '' });
    const get = await post({ 'Mcp-Method': 'tasks/get', 'Mcp-Name': 'other-task' }, 'tasks/get', {
      taskId: 'a-task',
    });
    expect(((await get.json()) as Json).error.code).toBe(-32020);
  });

  it('a name in the Base64 sentinel form is decoded before the comparison; an unknown method is 404 -32601', async () => {
    const encoded = `=?base64?${Buffer.from('sleep').toString('base64')}?=`;
    const ok = await post({ 'Mcp-Method': 'tools/call', 'Mcp-Name': encoded }, 'tools/call', {
      name: 'sleep',
      arguments: { seconds: 0 },
    });
    expect(((await ok.json()) as Json).result.resultType).toBe('task');
    const unknown = await post({ 'Mcp-Method': 'tasks/teleport' }, 'tasks/teleport', {});
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as Json).error.code).toBe(-32601);
  });
});

describe('MCP Origin check (DNS rebinding)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { MCP_ALLOWED_ORIGINS: 'http://localhost:6274' },
    });
  });
  afterAll(() => agent.stop());

  const discover = (origin?: string) =>
    fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'server/discover',
        ...agent.credentials,
        ...(origin ? { Origin: origin } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'server/discover',
        params: { _meta: meta(true) },
      }),
    });

  it('refuses a page of another site (403, saying what opens it); serves no Origin, its own, loopback and listed ones', async () => {
    const refused = await discover('http://evil.example:41241');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as Json).error.message).toContain('MCP_ALLOWED_ORIGINS');
    expect((await discover('null')).status).toBe(403);
    for (const origin of [
      undefined,
      new URL(agent.url).origin,
      'http://localhost:9999',
      'http://localhost:6274',
    ]) {
      const res = await discover(origin);
      expect(res.status, `Origin ${origin}`).toBe(200);
      expect(((await res.json()) as Json).result).toBeDefined();
    }
  });
});

describe('MCP Tasks extension: retention', () => {
  it('a task past its TTL is not found', async () => {
    const agent = await launch({ apiKeys: { alice: 'acme' }, env: { MAX_TTL_MS: '1500' } });
    try {
      const key = agent.keys.alice as string;
      const { body } = await modern(
        agent,
        'tools/call',
        { name: 'sleep', arguments: { seconds: 0 } },
        { key },
      );
      expect(body.result.ttlMs).toBe(1500);
      const { taskId } = body.result;
      const gone = await eventually(async () => {
        const reply = await modern(agent, 'tasks/get', { taskId }, { key });
        return reply.body.error;
      });
      expect(gone).toEqual(NOT_FOUND);
    } finally {
      await agent.stop();
    }
  });
});

const noPostgres = await skipWithoutPostgres();

describe.skipIf(noPostgres !== undefined)(
  'MCP Tasks extension on two instances of one PostgreSQL schema',
  () => {
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await startCluster(2, { apiKeys: { alice: 'acme' } });
    });
    afterAll(() => cluster.close());

    it('a task made on one instance is read, answered and cancelled through the other', async () => {
      const [a, b] = cluster.agents as [Agent, Agent];
      const key = a.keys.alice as string;
      const { body } = await modern(
        a,
        'tools/call',
        { name: 'approval', arguments: { action: 'Cross' } },
        { key },
      );
      const { taskId } = body.result;
      const waiting = await eventually(async () => {
        const { result } = (await modern(b, 'tasks/get', { taskId }, { key })).body;
        return result?.status === 'input_required' ? result : undefined;
      });
      const inputKey = Object.keys(waiting.inputRequests)[0] as string;
      await modern(
        b,
        'tasks/update',
        { taskId, inputResponses: { [inputKey]: { action: 'accept', content: { answer: 'approve' } } } },
        { key },
      );
      const done = await eventually(async () => {
        const { result } = (await modern(a, 'tasks/get', { taskId }, { key })).body;
        return result?.status === 'completed' ? result : undefined;
      });
      expect(done.result.content[0].text).toBe('Approved by acme/alice');
      const sleeping = (
        await modern(a, 'tools/call', { name: 'sleep', arguments: { seconds: 600 } }, { key })
      ).body.result.taskId;
      await modern(b, 'tasks/cancel', { taskId: sleeping }, { key });
      const cancelled = await eventually(async () => {
        const { result } = (await modern(a, 'tasks/get', { taskId: sleeping }, { key })).body;
        return result?.status === 'cancelled' ? result : undefined;
      });
      expect(cancelled.taskId).toBe(sleeping);
    });
  },
);
