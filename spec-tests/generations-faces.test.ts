import { SendMessageRequest, TaskState } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMessage, startTask, V1 } from './a2a.js';
import { type Cluster, startCluster } from './cluster.js';
import { asTask, failure, GRPC, grpcClient } from './grpc.js';
import { type Agent, launch, userMessage } from './harness.js';
import { modern } from './mcp-modern.js';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from './postgres.js';

/**
 * The task-generations extension on the faces generations.test.ts does not cover: gRPC (call
 * metadata), MCP (`_meta`), the bound on waiting polls (MAX_STREAMS), and two instances on one
 * PostgreSQL database (a change on one wakes a poll waiting on the other). The gRPC and MCP
 * conditions on both stores, as generations.test.ts runs the others.
 */
const GEN = 'https://taskhandle.dev/extensions/task-generations/v1';
const GRPC_ABORTED = 10;

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
type Json = Record<string, any>;
const generationOf = (task: { metadata?: Json }): number => task.metadata?.[GEN].generation;

const waitingTask = async (agent: Agent) => {
  const task = await startTask(agent, skillMessage('approval', { action: 'Deploy v2' }));
  return agent.waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
};

/** An MCP 2026-07-28 request as alice (tasks extension declared); the HTTP request prefers wait=1. */
const mcpCall = async (agent: Agent, method: string, params: Json, meta: Json = {}) =>
  (
    await modern(agent, method, params, {
      key: agent.keys.alice,
      elicitation: false,
      headers: { Prefer: 'wait=1' },
      meta,
    })
  ).body;

/** The answer to an approval task over gRPC: a v1.0 SendMessageRequest naming the task. */
const grpcAnswer = (taskId: string, text: string) =>
  SendMessageRequest.fromJSON({
    message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId, parts: [{ text }] },
  });

/** The waiting task's answer over JSON-RPC, answered at once (the poll, not the send, is under test). */
const approve = (agent: Agent, taskId: string) =>
  agent.rpc(
    'SendMessage',
    { message: userMessage('approve', { taskId }), configuration: { returnImmediately: true } },
    V1,
  );

const noPostgres = await skipWithoutPostgres();
const schema = freshSchema();
/** The conditional writes are a term of the store's own UPDATE: each face's on both stores. */
const STORES: [string, Record<string, string> | undefined][] = [
  ['sqlite', {}],
  ['postgres', noPostgres ? undefined : { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema }],
];

describe.each(STORES)('generations over gRPC and MCP (%s)', (store, env) => {
  let agent: Agent;
  beforeAll(async () => {
    if (!env) return;
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'globex' }, env: { ...env, GRPC_PORT: '0' } });
  });
  afterAll(async () => {
    await agent?.stop();
    if (store === 'postgres' && env) await dropSchema(schema);
  });
  const run = env ? it : it.skip;

  run(
    'gRPC: the task shows its generation; a stale if-generation-match is ABORTED, a current one cancels',
    async () => {
      const client = await grpcClient(agent.as('alice'));
      const task = await waitingTask(agent.as('alice'));
      const got = asTask(await client.getTask({ tenant: '', id: task.id, historyLength: undefined }));
      const current = generationOf(got);
      expect(current).toBe(generationOf(task));
      const stale = await failure(
        client.cancelTask(
          { tenant: '', id: task.id, metadata: undefined },
          { serviceParameters: { 'if-generation-match': String(current - 1) } },
        ),
      );
      expect(stale.status).toBe(GRPC_ABORTED);
      expect(stale.message).toMatch(/generation mismatch/);
      const bad = await failure(
        client.getTask(
          { tenant: '', id: task.id, historyLength: undefined },
          { serviceParameters: { 'current-generation': 'later' } },
        ),
      );
      expect(bad.status).toBe(GRPC.INVALID_ARGUMENT);
      // A long poll nothing passes ends with its wait, with the task as it stands.
      const polled = asTask(
        await client.getTask(
          { tenant: '', id: task.id, historyLength: undefined },
          { serviceParameters: { 'current-generation': String(current), prefer: 'wait=1' } },
        ),
      );
      expect(generationOf(polled)).toBe(current);
      const canceled = await client.cancelTask(
        { tenant: '', id: task.id, metadata: undefined },
        { serviceParameters: { 'if-generation-match': String(current) } },
      );
      expect(generationOf(canceled)).toBeGreaterThan(current);
    },
  );

  const mcp = (method: string, params: Json, meta: Json = {}) => mcpCall(agent, method, params, meta);

  run(
    'gRPC: a conditional answer (SendMessage with if-generation-match) is ABORTED when stale, leaving the task as it was, and answers when current',
    async () => {
      const client = await grpcClient(agent.as('alice'));
      const task = await waitingTask(agent.as('alice'));
      const current = generationOf(task);
      for (const stale of [current - 1, current + 5]) {
        const refused = await failure(
          client.sendMessage(grpcAnswer(task.id, 'approve'), {
            serviceParameters: { 'if-generation-match': String(stale) },
          }),
        );
        expect(refused.status).toBe(GRPC_ABORTED);
        expect(refused.message).toMatch(
          new RegExp(`generation mismatch: expected ${stale} but current generation is ${current}`),
        );
      }
      // Nothing was delivered: the task still waits, at its generation, without the answer.
      const still = asTask(await client.getTask({ tenant: '', id: task.id, historyLength: undefined }));
      expect(still.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(generationOf(still)).toBe(current);
      const texts = still.history.flatMap((m) =>
        m.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : undefined)),
      );
      expect(texts).not.toContain('approve');

      const answered = asTask(
        await client.sendMessage(grpcAnswer(task.id, 'approve'), {
          serviceParameters: { 'if-generation-match': String(current) },
        }),
      );
      expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(generationOf(answered)).toBeGreaterThan(current);
    },
  );

  run(
    'MCP: tasks show _meta["taskhandle/generation"]; tasks/get long-polls it; tasks/cancel takes the condition',
    async () => {
      const task = await waitingTask(agent.as('alice'));
      const got = await mcp('tasks/get', { taskId: task.id });
      const current = got.result._meta['taskhandle/generation'];
      expect(current).toBe(generationOf(task));
      const polled = await mcp('tasks/get', { taskId: task.id }, { 'taskhandle/currentGeneration': current });
      expect(polled.result._meta['taskhandle/generation']).toBe(current);
      const stale = await mcp(
        'tasks/cancel',
        { taskId: task.id },
        { 'taskhandle/ifGenerationMatch': current - 1 },
      );
      expect(stale.error).toMatchObject({ code: -32010, data: { currentGeneration: String(current) } });
      const done = await mcp(
        'tasks/cancel',
        { taskId: task.id },
        { 'taskhandle/ifGenerationMatch': current },
      );
      expect(done.error).toBeUndefined();
      expect((await mcp('tasks/get', { taskId: task.id })).result.status).toBe('cancelled');
    },
  );
});

describe('waiting polls count against MAX_STREAMS', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'globex' },
      env: { MAX_STREAMS: '2', GRPC_PORT: '0' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it("a third waiting poll is refused as a third stream is, in each face's shape (JSON-RPC, REST, /v1/jobs, gRPC, MCP); an answered poll frees its slot", async () => {
    const alice = agent.as('alice');
    const task = await waitingTask(alice);
    const seen = generationOf(task);
    const poll = () => alice.rpc('GetTask', { id: task.id, currentGeneration: seen }, V1);
    // Two wait (up to 30 s); the test ends them with the answer below.
    const waiting = [poll(), poll()];
    let refused = await poll();
    for (let i = 0; i < 50 && !refused.body.error; i++) refused = await poll(); // until both wait
    expect(refused.body.error.code).toBe(-32054);
    expect(refused.body.error.message).toMatch(/MAX_STREAMS/);
    const rest = await fetch(`${agent.url}/rest/tasks/${task.id}?currentGeneration=${seen}`, {
      headers: { ...alice.credentials, 'A2A-Version': '1.0' },
    });
    expect(rest.status).toBe(429);
    const jobs = await fetch(`${agent.url}/v1/jobs/${task.id}`, {
      headers: { ...alice.credentials, 'If-None-Match': `"${seen}"`, Prefer: 'wait=5' },
    });
    expect(jobs.status).toBe(429);
    const grpc = await grpcClient(alice);
    const viaGrpc = await failure(
      grpc.getTask(
        { tenant: '', id: task.id, historyLength: undefined },
        { serviceParameters: { 'current-generation': String(seen), prefer: 'wait=5' } },
      ),
    );
    expect(viaGrpc.status).toBe(GRPC.RESOURCE_EXHAUSTED);
    expect(viaGrpc.message).toMatch(/MAX_STREAMS/);
    const viaMcp = await mcpCall(
      agent,
      'tasks/get',
      { taskId: task.id },
      { 'taskhandle/currentGeneration': seen },
    );
    expect(viaMcp.error).toMatchObject({ code: -32600, data: { reason: 'too-many-streams' } });
    expect(viaMcp.error.message).toMatch(/You have 2 streams open, the most allowed \(MAX_STREAMS\)/);
    // Bob's polls are his own; a poll answered at once takes no slot.
    const bobs = await waitingTask(agent.as('bob'));
    const bobPoll = await agent
      .as('bob')
      .rpc(
        'GetTask',
        { id: bobs.id, currentGeneration: generationOf(bobs) },
        { ...V1, headers: { Prefer: 'wait=1' } },
      );
    expect(bobPoll.body.error).toBeUndefined();
    expect(
      (await alice.rpc('GetTask', { id: task.id, currentGeneration: seen - 1 }, V1)).body.error,
    ).toBeUndefined();

    await approve(alice, task.id);
    for (const answered of await Promise.all(waiting)) {
      expect(generationOf(answered.body.result)).toBeGreaterThan(seen);
    }
    const again = await alice.rpc('GetTask', { id: task.id, currentGeneration: seen }, V1);
    expect(again.body.error).toBeUndefined();
  }, 25_000);
});

describe.skipIf(noPostgres !== undefined)('long polls across two instances on one PostgreSQL', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(2, { apiKeys: { alice: 'acme' } });
  });
  afterAll(async () => {
    await cluster?.close();
  });

  it('a change made on instance B wakes a poll waiting on instance A', { timeout: 20_000 }, async () => {
    const [a, b] = cluster.agents as [Agent, Agent];
    const task = await waitingTask(a);
    const seen = generationOf(task);
    // It may wait 30 s, longer than this test may take: only B's change can answer it in time.
    const polls = [
      a.rpc('GetTask', { id: task.id, currentGeneration: seen }, V1),
      fetch(`${a.url}/v1/jobs/${task.id}`, {
        headers: { ...a.credentials, 'If-None-Match': `"${seen}"`, Prefer: 'wait=30' },
      }),
    ] as const;
    await new Promise((r) => setTimeout(r, 300));
    const answered = await approve(b, task.id);
    expect(answered.body.error).toBeUndefined();
    const [rpc, job] = await Promise.all(polls);
    expect(generationOf(rpc.body.result)).toBeGreaterThan(seen);
    expect(job.status).toBe(200);
    // A conditional cancel made on A with the generation B's answer moved past: refused.
    const stale = await a.rpc('CancelTask', { id: task.id, ifGenerationMatch: seen }, V1);
    expect(stale.body.error.code).toBe(-32010);
  });
});
