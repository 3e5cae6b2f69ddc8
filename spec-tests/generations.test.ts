import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from './postgres.js';

/**
 * The task-generations extension (A2A 1.1 draft, section 3.2.7): every face shows a task's
 * generation, takes conditional cancels and answers (refused when stale, in the face's shape),
 * and long-polls GetTask: at once when the task is past the caller's generation, on the change
 * that passes it, or at the end of the wait. On both stores.
 */
const GEN = 'https://taskhandle.dev/extensions/task-generations/v1';

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
type Json = Record<string, any>;

const noPostgres = await skipWithoutPostgres();
const schema = freshSchema();
const STORES: [string, Record<string, string> | undefined][] = [
  ['sqlite', {}],
  ['postgres', noPostgres ? undefined : { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema }],
];

describe.each(STORES)('task generations (%s)', (store, env) => {
  let agent: Agent;
  beforeAll(async () => {
    if (!env) return;
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'globex' }, env });
  });
  afterAll(async () => {
    await agent?.stop();
    if (store === 'postgres' && env) await dropSchema(schema);
  });
  const run = env ? it : it.skip;

  const alice = () => agent.as('alice');
  const generationOf = (task: Json): number => task.metadata[GEN].generation;
  const waiting = async () => {
    const task = await startTask(alice(), skillMessage('approval', { action: 'Deploy v2' }));
    const waited = await alice().waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
    return waited;
  };
  const rpc = (method: string, params: Json, headers: Record<string, string> = {}, as = 'alice') =>
    agent.as(as).rpc(method, params, { ...V1, headers });
  const rest = (path: string, init: RequestInit = {}, as = 'alice') =>
    fetch(`${agent.url}/rest${path}`, {
      ...init,
      headers: {
        ...agent.as(as).credentials,
        'A2A-Version': '1.0',
        'Content-Type': 'application/json',
        ...(init.headers as Record<string, string>),
      },
    });
  const jobs = (path: string, init: RequestInit = {}, as = 'alice') =>
    fetch(`${agent.url}/v1/jobs${path}`, {
      ...init,
      headers: {
        ...agent.as(as).credentials,
        'Content-Type': 'application/json',
        ...(init.headers as Record<string, string>),
      },
    });
  const answer = (taskId: string, text: string) => ({
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    taskId,
    parts: [{ text }],
  });

  run(
    'the card declares the extension; every task shows its generation, as its ETag on /v1/jobs',
    async () => {
      const card = (await (await fetch(`${agent.url}/.well-known/agent-card.json`)).json()) as Json;
      expect(card.capabilities.extensions.map((e: Json) => e.uri)).toContain(GEN);
      const task = await waiting();
      const generation = generationOf(task);
      expect(generation).toBeGreaterThanOrEqual(1);
      const viaRest = (await (await rest(`/tasks/${task.id}`)).json()) as Json;
      expect(generationOf(viaRest)).toBe(generation);
      const job = await jobs(`/${task.id}`);
      expect(job.headers.get('etag')).toBe(`"${generation}"`);
    },
  );

  run(
    'a conditional cancel at a stale generation is refused on each face, and applies at the current one',
    async () => {
      const task = await waiting();
      const current = generationOf(task);
      const stale = current - 1;

      const refused = await rpc('CancelTask', { id: task.id, ifGenerationMatch: stale });
      expect(refused.body.error.code).toBe(-32010);
      expect(refused.body.error.message).toMatch(
        /generation mismatch: expected \d+ but current generation is \d+/,
      );
      expect(refused.body.error.data[0]).toMatchObject({
        reason: 'TASK_GENERATION_MISMATCH',
        domain: 'a2a-protocol.org',
        metadata: { taskId: task.id, expectedGeneration: String(stale), currentGeneration: String(current) },
      });

      const viaRest = await rest(`/tasks/${task.id}:cancel`, {
        method: 'POST',
        body: JSON.stringify({ id: task.id, ifGenerationMatch: String(stale) }),
      });
      expect(viaRest.status).toBe(409);
      expect(((await viaRest.json()) as Json).error).toMatchObject({
        code: 409,
        status: 'ABORTED',
        details: [expect.objectContaining({ reason: 'TASK_GENERATION_MISMATCH' })],
      });

      const viaJobs = await jobs(`/${task.id}`, { method: 'DELETE', headers: { 'If-Match': `"${stale}"` } });
      expect(viaJobs.status).toBe(412);
      expect(((await viaJobs.json()) as Json).currentGeneration).toBe(current);

      // Nothing was written by any of them.
      expect(generationOf((await rpc('GetTask', { id: task.id })).body.result)).toBe(current);
      const done = await rpc('CancelTask', { id: task.id, ifGenerationMatch: current });
      expect(done.body.result.status.state).toBe('TASK_STATE_CANCELED');
      expect(generationOf(done.body.result)).toBeGreaterThan(current);
    },
  );

  run('/v1/jobs cancels with a matching If-Match', async () => {
    const task = await waiting();
    const res = await jobs(`/${task.id}:cancel`, {
      method: 'POST',
      headers: { 'If-Match': `"${generationOf(task)}"` },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as Json).status).toBe('cancelled');
  });

  run(
    'a conditional answer at a stale generation is refused (nothing delivered), at the current one answers',
    async () => {
      const task = await waiting();
      const current = generationOf(task);
      const stale = await rpc('SendMessage', {
        message: answer(task.id, 'approve'),
        configuration: { ifGenerationMatch: current - 1 },
      });
      expect(stale.body.error.code).toBe(-32010);
      const viaRest = await rest('/message:send', {
        method: 'POST',
        body: JSON.stringify({
          message: answer(task.id, 'approve'),
          configuration: { ifGenerationMatch: 0 },
        }),
      });
      expect(viaRest.status).toBe(409);
      const viaJobs = await jobs(`/${task.id}:input`, {
        method: 'POST',
        headers: { 'If-Match': `"${current + 5}"` },
        body: JSON.stringify({ text: 'approve' }),
      });
      expect(viaJobs.status).toBe(412);
      const still = (await rpc('GetTask', { id: task.id })).body.result;
      expect(still.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(generationOf(still)).toBe(current);
      expect(still.history.filter((m: Json) => m.parts?.[0]?.text === 'approve')).toEqual([]);

      const ok = await rpc('SendMessage', {
        message: answer(task.id, 'approve'),
        configuration: { ifGenerationMatch: String(current) },
      });
      expect(ok.body.error).toBeUndefined();
      expect(ok.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    },
  );

  run('/v1/jobs answers with a matching If-Match', async () => {
    const task = await waiting();
    const res = await jobs(`/${task.id}:input`, {
      method: 'POST',
      headers: { 'If-Match': `"${generationOf(task)}"` },
      body: JSON.stringify({ text: 'approve' }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  run('a generation that is not one is refused naming the field', async () => {
    const task = await waiting();
    const bad = await rpc('GetTask', { id: task.id, currentGeneration: -1 });
    expect(bad.body.error.code).toBe(-32602);
    expect(bad.body.error.message).toMatch(/currentGeneration must be a non-negative integer/);
    const badRest = await rest(`/tasks/${task.id}?currentGeneration=soon`);
    expect(badRest.status).toBe(400);
  });

  run('a long poll behind the task is answered at once, with the task', async () => {
    const task = await waiting();
    const polled = await rpc('GetTask', { id: task.id, currentGeneration: generationOf(task) - 1 });
    expect(polled.body.result.id).toBe(task.id);
    expect(generationOf(polled.body.result)).toBe(generationOf(task));
  });

  run('a long poll is answered by the change that passes its generation', { timeout: 20_000 }, async () => {
    // The poll may wait 30 s, longer than this test may take: only the change can answer it in time.
    const task = await waiting();
    const seen = generationOf(task);
    const polls = [
      rpc('GetTask', { id: task.id, currentGeneration: seen }),
      rest(`/tasks/${task.id}?currentGeneration=${seen}`).then(async (r) => ({
        body: { result: await r.json() },
      })),
    ];
    const job = jobs(`/${task.id}`, { headers: { 'If-None-Match': `"${seen}"`, Prefer: 'wait=30' } });
    // The polls wait (nothing else changes a task that waits for input); the answer passes them.
    await new Promise((r) => setTimeout(r, 300));
    await rpc('SendMessage', {
      message: answer(task.id, 'approve'),
      configuration: { returnImmediately: true },
    });
    for (const poll of await Promise.all(polls)) {
      expect(generationOf(poll.body.result)).toBeGreaterThan(seen);
    }
    const jobAnswer = await job;
    expect(jobAnswer.status).toBe(200);
    expect(Number(jobAnswer.headers.get('etag')?.replaceAll('"', ''))).toBeGreaterThan(seen);
  });

  run(
    'v0.3 JSON-RPC: tasks/get shows the generation, long-polls, and tasks/cancel takes the condition',
    async () => {
      const task = await waiting();
      const seen = generationOf(task);
      const v03 = (method: string, params: Json) => agent.as('alice').rpc(method, params);
      const polled = await v03('tasks/get', { id: task.id, currentGeneration: seen - 1 });
      expect(polled.body.result.kind).toBe('task');
      expect(generationOf(polled.body.result)).toBe(seen);
      const stale = await v03('tasks/cancel', { id: task.id, ifGenerationMatch: seen - 1 });
      expect(stale.body.error.code).toBe(-32010);
      const done = await v03('tasks/cancel', { id: task.id, ifGenerationMatch: seen });
      expect(done.body.result.status.state).toBe('canceled');
    },
  );

  run(
    'a long poll nothing passes is answered at the end of its wait, with the task as it stands',
    async () => {
      const task = await waiting();
      const seen = generationOf(task);
      const polled = await rpc('GetTask', { id: task.id, currentGeneration: seen }, { Prefer: 'wait=1' });
      expect(polled.body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(generationOf(polled.body.result)).toBe(seen);
      const job = await jobs(`/${task.id}`, { headers: { 'If-None-Match': `"${seen}"`, Prefer: 'wait=1' } });
      expect(job.status).toBe(304);
      expect(job.headers.get('etag')).toBe(`"${seen}"`);
      expect(job.headers.get('preference-applied')).toBe('wait=1');
      // Without Prefer: wait, a conditional GET is answered at once.
      expect((await jobs(`/${task.id}`, { headers: { 'If-None-Match': `"${seen}"` } })).status).toBe(304);
    },
  );

  run("another principal's task is not found, exactly as GetTask answers it", async () => {
    const task = await waiting();
    const seen = generationOf(task);
    const plain = await rpc('GetTask', { id: task.id }, {}, 'bob');
    const polled = await rpc('GetTask', { id: task.id, currentGeneration: seen }, {}, 'bob');
    expect(plain.body.error.code).toBe(-32001);
    expect(polled.body.error).toEqual(plain.body.error);
    const cancel = await rpc('CancelTask', { id: task.id, ifGenerationMatch: seen - 1 }, {}, 'bob');
    expect(cancel.body.error.code).toBe(-32001);
    const job = await jobs(
      `/${task.id}`,
      { headers: { 'If-None-Match': `"${seen}"`, Prefer: 'wait=5' } },
      'bob',
    );
    expect(job.status).toBe(404);
    const jobCancel = await jobs(
      `/${task.id}`,
      { method: 'DELETE', headers: { 'If-Match': `"${seen}"` } },
      'bob',
    );
    expect(jobCancel.status).toBe(404);
  });
});
