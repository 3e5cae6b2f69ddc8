import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  EmptyResultSchema,
  ErrorCode,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CSV_HEADER, csvLines, eventually, getTask } from './a2a.js';
import { type Agent, launch, tempDbPath } from './harness.js';

/**
 * A connected SDK client (1.x, protocol 2025-11-25) calling as `key`'s principal (none: anonymous).
 * With `elicit` it declares form-mode elicitation and answers with it; every request of the server's
 * that it has no handler for is noted in `unasked` and answered -32601, as the SDK does.
 */
async function connect(
  url: string,
  key?: string,
  o: { elicit?: (message: string) => Record<string, unknown>; unasked?: string[] } = {},
) {
  const client = new Client(
    { name: 'mcp-test', version: '1.0.0' },
    { capabilities: o.elicit ? { elicitation: { form: {} } } : {} },
  );
  if (o.elicit) {
    const answer = o.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (req) => answer(req.params.message));
  }
  const unasked = o.unasked;
  if (unasked) {
    client.fallbackRequestHandler = async (req) => {
      unasked.push(req.method);
      throw new McpError(ErrorCode.MethodNotFound, 'Method not found');
    };
  }
  const headers: Record<string, string> = key ? { Authorization: `Bearer ${key}` } : {};
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

/** A waiting task's question, as every client reads it (docs/mcp.md, "Input required"). */
const questionOf = (task: { _meta?: Record<string, unknown> }) =>
  task._meta?.['taskhandle/input'] as { key: string; requestedSchema: unknown } | undefined;

type Message = { type: string; task?: { status: string }; result?: unknown; error?: unknown };

async function collect(stream: AsyncIterable<Message>): Promise<Message[]> {
  const out: Message[] = [];
  for await (const m of stream) out.push(m);
  return out;
}

const clients: Client[] = [];
const client = async (...args: Parameters<typeof connect>) => {
  const c = await connect(...args);
  clients.push(c);
  return c;
};

describe('MCP face: the real @modelcontextprotocol/sdk 1.x client (protocol 2025-11-25)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'acme' }, env: { INLINE_ARTIFACT_BYTES: '4096' } });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  afterAll(() => agent.stop());

  it('initializes with task capabilities and lists every skill as a tool with its JSON Schema', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    expect(alice.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['approval', 'batch', 'export', 'sleep']);
    const exportTool = tools.find((t) => t.name === 'export');
    expect(exportTool?.execution).toEqual({ taskSupport: 'optional' });
    expect(exportTool?.inputSchema).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: { format: { type: 'string', enum: ['csv', 'ndjson'] } },
    });
  });

  it('a task-augmented call returns the handle, is polled, and its result holds the CSV', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    await alice.listTools();
    const messages = await collect(
      alice.experimental.tasks.callToolStream({
        name: 'export',
        arguments: { rows: 3 },
      }) as AsyncIterable<Message>,
    );
    expect(messages[0]?.type).toBe('taskCreated');
    const result = messages.at(-1)?.result as {
      content: { type: string; resource?: { text?: string; uri: string } }[];
    };
    expect(messages.at(-1)?.type).toBe('result');
    const file = result.content.find((c) => c.type === 'resource')?.resource;
    expect(csvLines(file?.text ?? '')).toEqual([
      CSV_HEADER,
      expect.any(String),
      expect.any(String),
      expect.any(String),
    ]);
    expect(file?.uri).toMatch(/\/v1\/jobs\/.+\/artifacts\//);
  });

  it('one task, every face: the MCP task is the A2A task and the /v1/jobs job of the same principal, and the reverse', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    const created = await alice.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { seconds: 0 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const viaA2a = await getTask(agent, taskId);
    expect(viaA2a.id).toBe(taskId);
    const job = await fetch(`${agent.url}/v1/jobs/${taskId}`, { headers: agent.credentials });
    expect(((await job.json()) as { taskId: string }).taskId).toBe(taskId);
    // And the reverse: a job made over /v1/jobs is an MCP task, its result an MCP result.
    const made = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      headers: { ...agent.credentials, 'Content-Type': 'application/json', Prefer: 'wait=10' },
      body: JSON.stringify({ skill: 'sleep', input: { seconds: 0 } }),
    });
    const jobId = ((await made.json()) as { taskId: string }).taskId;
    expect((await alice.experimental.tasks.getTask(jobId)).status).toBe('completed');
    const result = await alice.experimental.tasks.getTaskResult(jobId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Slept 0 s' }]);
  });

  it('a large artifact is a resource link to the download route, which gives the file with the same key', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    const result = (await alice.callTool({ name: 'export', arguments: { rows: 500 } })) as {
      content: { type: string; uri?: string; size?: number; mimeType?: string }[];
    };
    const link = result.content.find((c) => c.type === 'resource_link');
    expect(link).toMatchObject({ mimeType: 'text/csv', uri: expect.stringContaining('/v1/jobs/') });
    const anonymous = await fetch(String(link?.uri));
    expect(anonymous.status).toBe(401);
    const download = await fetch(String(link?.uri), {
      headers: { Authorization: `Bearer ${agent.keys.alice}` },
    });
    const text = await download.text();
    expect(csvLines(text)).toHaveLength(501);
    expect(Buffer.byteLength(text)).toBe(link?.size);
  });

  it('cancels a running task; the status says cancelled and a second cancel is refused', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    await alice.listTools();
    const stream = alice.experimental.tasks.callToolStream({ name: 'sleep', arguments: { seconds: 600 } });
    const first = (await stream[Symbol.asyncIterator]().next()).value as { task: { taskId: string } };
    const taskId = first.task.taskId;
    const cancelled = await alice.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    expect((await alice.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    await expect(alice.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/already cancelled/);
  });

  it('another principal is refused as for a missing task, and lists only its own tasks', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    const bob = await client(agent.url, agent.keys.bob);
    await alice.listTools();
    const [created] = await collect(
      alice.experimental.tasks.callToolStream({
        name: 'sleep',
        arguments: { seconds: 0 },
      }) as AsyncIterable<Message>,
    );
    const taskId = (created as unknown as { task: { taskId: string } }).task.taskId;
    const refusal = async (id: string) => {
      try {
        await bob.experimental.tasks.getTask(id);
      } catch (err) {
        return { code: (err as McpError).code, message: (err as McpError).message };
      }
      throw new Error('bob read the task');
    };
    const theirs = await refusal(taskId);
    expect(theirs.code).toBe(-32602);
    expect(theirs).toEqual(await refusal('00000000-0000-7000-8000-000000000000'));
    const mine = await alice.experimental.tasks.listTasks();
    expect(mine.tasks.map((t) => t.taskId)).toContain(taskId);
    const bobs = await bob.experimental.tasks.listTasks();
    expect(bobs.tasks.map((t) => t.taskId)).not.toContain(taskId);
  });

  it('input_required is answered through elicitation on tasks/result', async () => {
    const prompts: string[] = [];
    const alice = await client(agent.url, agent.keys.alice, {
      elicit: (message) => {
        prompts.push(message);
        return { action: 'accept', content: { decision: 'approve', comment: 'looks fine' } };
      },
    });
    // The approval suggests polling once a minute: the test waits for input_required itself, then
    // calls tasks/result as callToolStream does at that status.
    const { task } = await alice.request(
      { method: 'tools/call', params: { name: 'approval', arguments: { action: 'Deploy v2' }, task: {} } },
      CreateTaskResultSchema,
    );
    await eventually(async () => {
      const now = await alice.experimental.tasks.getTask(task.taskId);
      return now.status === 'input_required' ? now : undefined;
    });
    const result = await alice.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(prompts[0]).toMatch(/Approve or reject: Deploy v2/);
    expect(result.isError).toBe(false);
    expect(result.content[0]).toEqual({
      type: 'text',
      text: expect.stringMatching(/^Approved by .*: looks fine$/),
    });
    expect(result._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
  });

  it('a client that declared no elicitation is sent none: it reads the question with tasks/get and answers with tasks/update', async () => {
    const unasked: string[] = [];
    const alice = await client(agent.url, agent.keys.alice, { unasked });
    const { task } = await alice.request(
      { method: 'tools/call', params: { name: 'approval', arguments: { action: 'Deploy v3' }, task: {} } },
      CreateTaskResultSchema,
    );
    const waiting = await eventually(async () => {
      const now = await alice.experimental.tasks.getTask(task.taskId);
      return now.status === 'input_required' ? now : undefined;
    });
    expect(waiting.statusMessage).toBe(
      'Approve or reject: Deploy v3\nAnswer "approve" or "reject" (a comment may follow).',
    );
    const question = questionOf(waiting) as { key: string };
    expect(question).toEqual({
      key: expect.stringMatching(/^ask-\d+$/),
      requestedSchema: {
        type: 'object',
        properties: {
          decision: { type: 'string', enum: ['approve', 'reject'] },
          comment: { type: 'string', maxLength: 2000 },
        },
        required: ['decision'],
      },
    });
    // tasks/result (as callToolStream calls it at input_required) waits, and asks nothing.
    const result = alice.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await new Promise((r) => setTimeout(r, 1000));
    expect(unasked).toEqual([]);
    expect((await alice.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');
    const ack = await alice.request(
      {
        method: 'tasks/update',
        params: {
          taskId: task.taskId,
          inputResponses: {
            [question.key]: { action: 'accept', content: { decision: 'approve', comment: 'go' } },
          },
        },
      },
      EmptyResultSchema,
    );
    expect(ack).toEqual({});
    const done = await result;
    expect(done.content[0]).toEqual({ type: 'text', text: expect.stringMatching(/^Approved by .*: go$/) });
    expect(unasked).toEqual([]);
  });

  it("a declared client's cancel (dismissed) leaves the task waiting; its decline cancels the task", async () => {
    const actions = ['cancel', 'decline'];
    const prompts: string[] = [];
    const alice = await client(agent.url, agent.keys.alice, {
      elicit: (message) => {
        prompts.push(message);
        return { action: actions.shift() ?? 'cancel' };
      },
    });
    const ask = async (action: string) => {
      const { task } = await alice.request(
        { method: 'tools/call', params: { name: 'approval', arguments: { action }, task: {} } },
        CreateTaskResultSchema,
      );
      await eventually(async () => {
        const now = await alice.experimental.tasks.getTask(task.taskId);
        return now.status === 'input_required' ? now : undefined;
      });
      return task.taskId;
    };
    const dismissed = await ask('Dismiss me');
    const waiting = alice.experimental.tasks.getTaskResult(dismissed, CallToolResultSchema);
    await eventually(async () => (prompts.length === 1 ? true : undefined));
    await new Promise((r) => setTimeout(r, 1000));
    const still = await alice.experimental.tasks.getTask(dismissed);
    expect(still.status).toBe('input_required');
    // The question is still open: answered another way, the waiting tasks/result gets the result.
    const key = questionOf(still)?.key as string;
    await alice.request(
      {
        method: 'tasks/update',
        params: {
          taskId: dismissed,
          inputResponses: { [key]: { action: 'accept', content: { decision: 'approve' } } },
        },
      },
      EmptyResultSchema,
    );
    expect((await waiting).isError).toBe(false);
    expect(prompts).toHaveLength(1); // asked once on that stream, not again after the dismissal
    const declined = await ask('Decline me');
    await expect(alice.experimental.tasks.getTaskResult(declined, CallToolResultSchema)).rejects.toThrow(
      /cancelled/,
    );
    expect((await alice.experimental.tasks.getTask(declined)).status).toBe('cancelled');
  });

  it("a response to an elicitation the client never declared, or an error reply, cancels no one's task", async () => {
    const alice = await client(agent.url, agent.keys.alice);
    const { task } = await alice.request(
      { method: 'tools/call', params: { name: 'approval', arguments: { action: 'Keep me' }, task: {} } },
      CreateTaskResultSchema,
    );
    const waiting = await eventually(async () => {
      const now = await alice.experimental.tasks.getTask(task.taskId);
      return now.status === 'input_required' ? now : undefined;
    });
    const key = questionOf(waiting)?.key as string;
    const id = `input:${key}:${task.taskId}`;
    const post = (session: string | undefined, message: Record<string, unknown>) =>
      fetch(`${agent.url}/mcp`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          Authorization: `Bearer ${agent.keys.alice}`,
          ...(session ? { 'Mcp-Session-Id': session } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', ...message }),
      });
    const initialize = async (capabilities: Record<string, unknown>) => {
      const res = await post(undefined, {
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
      });
      return res.headers.get('Mcp-Session-Id') ?? undefined;
    };
    const undeclared = await initialize({});
    const urlOnly = await initialize({ elicitation: { url: {} } });
    const declared = await initialize({ elicitation: {} });
    expect(undeclared).toMatch(/^[\x21-\x7e]+$/);
    for (const session of [undefined, undeclared, urlOnly]) {
      for (const result of [{ action: 'decline' }, { action: 'cancel' }]) {
        expect((await post(session, { id, result })).status).toBe(202);
      }
    }
    // From a client that did declare elicitation: an error reply (as the SDK's -32601) changes nothing.
    const error = { code: -32601, message: 'Method not found' };
    expect((await post(declared, { id, error })).status).toBe(202);
    expect((await post(declared, { id, result: { action: 'cancel' } })).status).toBe(202);
    await new Promise((r) => setTimeout(r, 500));
    expect((await alice.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');
    // Its decline is an answer: the task is cancelled.
    expect((await post(declared, { id, result: { action: 'decline' } })).status).toBe(202);
    await eventually(async () => {
      const now = await alice.experimental.tasks.getTask(task.taskId);
      return now.status === 'cancelled' ? now : undefined;
    });
  });

  it('tools/list schemas have no empty {} sub-schema (strict checkers flag it): z.unknown() is left out or typed', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    const { tools } = await alice.listTools();
    const VALUES = new Set(['default', 'const', 'enum', 'examples']);
    const empties = (schema: unknown, at: string): string[] => {
      if (typeof schema !== 'object' || schema === null) return [];
      if (!Array.isArray(schema) && Object.keys(schema).length === 0) return [at];
      return Object.entries(schema).flatMap(([k, v]) => (VALUES.has(k) ? [] : empties(v, `${at}.${k}`)));
    };
    expect(tools.flatMap((t) => empties(t.inputSchema, t.name))).toEqual([]);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema.properties]));
    expect(byName.export?.data).toEqual({
      type: 'array',
      maxItems: 100_000,
      items: { type: 'object', propertyNames: { type: 'string' } },
    });
    expect(byName.batch?.items).toEqual({ type: 'array', minItems: 1, maxItems: 10_000 });
  });

  it('a plain tools/call (no task) is held open and answers the CallToolResult', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    const result = (await alice.callTool({ name: 'sleep', arguments: { seconds: 0 } })) as {
      content: { text: string }[];
      isError: boolean;
    };
    expect(result).toEqual({ content: [{ type: 'text', text: 'Slept 0 s' }], isError: false });
  });

  it("a plain call with a progress token gets notifications/progress from the task's progress", async () => {
    const alice = await client(agent.url, agent.keys.alice);
    const seen: number[] = [];
    const result = await alice.callTool({ name: 'sleep', arguments: { seconds: 2 } }, undefined, {
      onprogress: (p) => seen.push(p.progress),
    });
    expect(result.content).toEqual([{ type: 'text', text: 'Slept 2 s' }]);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
  });

  it('a plain call from a client that takes no SSE is answered as JSON', async () => {
    const res = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...agent.credentials },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'sleep', arguments: { seconds: 0 } },
      }),
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: 'Slept 0 s' }], isError: false },
    });
  });

  it('a dropped tasks/result stream resumes from its Last-Event-ID (GET /mcp) and ends with the answer', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    const { task } = await alice.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { seconds: 2 }, task: {} } },
      CreateTaskResultSchema,
    );
    const auth = { Authorization: `Bearer ${agent.keys.alice}` };
    const dropped = new AbortController();
    const res = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 41,
        method: 'tasks/result',
        params: { taskId: task.taskId },
      }),
      signal: dropped.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    while (!/^id: \S+$/m.test(seen)) seen += new TextDecoder().decode((await reader.read()).value);
    const lastId = /^id: (\S+)$/m.exec(seen)?.[1] as string;
    dropped.abort();
    const resume = (id: string) =>
      fetch(`${agent.url}/mcp`, { headers: { ...auth, Accept: 'text/event-stream', 'Last-Event-ID': id } });
    const resumed = await resume(lastId);
    expect(resumed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const rest = await resumed.text();
    const data = [...rest.matchAll(/^data: (.+)$/gm)].map((m) => JSON.parse(m[1] as string));
    expect(data.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 41,
      result: {
        content: [{ type: 'text', text: 'Slept 2 s' }],
        isError: false,
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
      },
    });
    // After the answer there is nothing more to resume; another principal resumes nothing.
    const endId = [...rest.matchAll(/^id: (\S+)$/gm)].at(-1)?.[1] as string;
    expect((await resume(endId)).status).toBe(405);
    const bob = await fetch(`${agent.url}/mcp`, {
      headers: {
        Authorization: `Bearer ${agent.keys.bob}`,
        Accept: 'text/event-stream',
        'Last-Event-ID': lastId,
      },
    });
    expect(bob.status).toBe(404);
  });

  it('wrong arguments and unknown tools are JSON-RPC errors that say what to send', async () => {
    const alice = await client(agent.url, agent.keys.alice);
    await expect(alice.callTool({ name: 'export', arguments: { rowz: 3 } })).rejects.toThrow(/rowz/);
    await expect(alice.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(
      /Unknown tool "nope"; tools\/list/,
    );
  });
});

describe('MCP face: anonymous callers and restarts', () => {
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  it('an anonymous caller gets no tasks/list capability, and tasks/list answers as the capabilities say (-32601)', async () => {
    const agent = await launch();
    agents.push(agent);
    const anonymous = await client(agent.url);
    expect(anonymous.getServerCapabilities()?.tasks).toEqual({
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const res = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list' }),
    });
    const body = (await res.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32601);
    expect(body.error.message).toContain('tasks/get');
  });

  it('a task started before a restart is polled to its result after it', async () => {
    const dbPath = tempDbPath();
    const fast = { LEASE_MS: '1000', RUNNER_POLL_MS: '100' };
    const first = await launch({ dbPath, apiKeys: { alice: 'acme' }, env: fast });
    agents.push(first);
    const before = await client(first.url, first.keys.alice);
    await before.listTools();
    const stream = before.experimental.tasks.callToolStream({ name: 'sleep', arguments: { seconds: 2 } });
    const created = (await stream[Symbol.asyncIterator]().next()).value as { task: { taskId: string } };
    await before.close();
    await first.kill9();
    agents.splice(0);
    const second = await launch({
      dbPath,
      apiKeysFile: { file: String(first.keysFile), keys: first.keys },
      env: fast,
    });
    agents.push(second);
    const after = await client(second.url, second.keys.alice);
    const done = await eventually(async () => {
      const task = await after.experimental.tasks.getTask(created.task.taskId);
      return task.status === 'completed' ? task : undefined;
    });
    expect(done.taskId).toBe(created.task.taskId);
    const result = await after.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Slept 2 s' }]);
  });
});

describe('MCP face: idempotent calls and JWT identities', () => {
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  it('a retried tools/call with the same idempotency key starts no second job (nor does /v1/jobs with that key)', async () => {
    const agent = await launch({ apiKeys: { alice: 'acme' } });
    agents.push(agent);
    const alice = await client(agent.url, agent.keys.alice);
    const call = (args: Record<string, unknown>) =>
      alice.request(
        {
          method: 'tools/call',
          params: { name: 'sleep', arguments: args, task: {}, _meta: { 'taskhandle/idempotencyKey': 'k-1' } },
        },
        CreateTaskResultSchema,
      );
    const first = await call({ seconds: 0 });
    const retry = await call({ seconds: 0 });
    expect(retry.task.taskId).toBe(first.task.taskId);
    await expect(call({ seconds: 1 })).rejects.toThrow(
      /Idempotency key "k-1" was used with another tool or other arguments/,
    );
    const viaJobs = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      headers: { ...agent.credentials, 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1' },
      body: JSON.stringify({ skill: 'sleep', input: { seconds: 0 } }),
    });
    expect(((await viaJobs.json()) as { taskId: string }).taskId).toBe(first.task.taskId);
    const { tasks } = await alice.experimental.tasks.listTasks();
    expect(tasks.filter((t) => t.taskId === first.task.taskId)).toHaveLength(1);
    expect(tasks).toHaveLength(1);
  });

  it('takes bearer JWTs, and names the protected-resource metadata (the JWT issuer) in its 401', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwks = join(mkdtempSync(join(tmpdir(), 'mcp-jwks-')), 'jwks.json');
    writeFileSync(
      jwks,
      JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
    );
    const issuer = 'https://issuer.mcp-tests.example';
    const agent = await launch({
      env: { JWT_JWKS_FILE: jwks, JWT_ISSUER: issuer, JWT_AUDIENCE: 'taskhandle-mcp' },
    });
    agents.push(agent);
    const refused = await fetch(`${agent.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(refused.status).toBe(401);
    const metadataUrl = `${agent.url}/.well-known/oauth-protected-resource/mcp`;
    expect(refused.headers.get('WWW-Authenticate')).toContain(`resource_metadata="${metadataUrl}"`);
    expect(await (await fetch(metadataUrl)).json()).toEqual({
      resource: `${agent.url}/mcp`,
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      resource_name: 'taskhandle MCP endpoint',
    });
    const token = await new SignJWT({ tenant: 'acme' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience('taskhandle-mcp')
      .setSubject('dana')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);
    const dana = await client(agent.url, token);
    expect((await dana.listTools()).tools.length).toBeGreaterThan(0);
    const result = await dana.callTool({ name: 'sleep', arguments: { seconds: 0 } });
    expect(result.content).toEqual([{ type: 'text', text: 'Slept 0 s' }]);
  });
});
