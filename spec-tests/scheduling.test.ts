import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getTask, skillMessage } from './a2a.js';
import { type Agent, launch } from './harness.js';

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

/** Fair claims, queue standing and priorities as callers see them (docs/scheduling.md). */
describe('scheduling: one runner slot shared by tenants', () => {
  let agent: Agent;
  const post = async (who: string, body: Json): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      headers: { ...agent.as(who).credentials, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const job = async (who: string, id: string): Promise<Json> => {
    const res = await fetch(`${agent.url}/v1/jobs/${id}`, { headers: agent.as(who).credentials });
    return (await res.json()) as Json;
  };
  const cancel = (who: string, id: string) =>
    fetch(`${agent.url}/v1/jobs/${id}:cancel`, { method: 'POST', headers: agent.as(who).credentials });
  const long = (who: string, extra: Json = {}) =>
    post(who, { skill: 'sleep', input: { seconds: 600 }, ...extra });
  const until = async (who: string, id: string, state: string): Promise<Json> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const doc = await job(who, id);
      if (doc.state === state) return doc;
      if (Date.now() > deadline) throw new Error(`job ${id} not ${state}: ${JSON.stringify(doc)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', carol: 'acme', bob: 'globex' },
      env: { RUNNER_CONCURRENCY: '1', MAX_PRIORITY: '3' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it("a flood by one tenant does not delay another tenant's job beyond the next free slot", async () => {
    const flood: string[] = [];
    for (let i = 0; i < 6; i++) {
      flood.push((await long('alice')).body.taskId);
      // A queue is in creation order to the millisecond (within one, by task id): one apart.
      await new Promise((r) => setTimeout(r, 2));
    }
    const running = flood[0] as string;
    await until('alice', running, 'working');
    const bobs = (await post('bob', { skill: 'sleep', input: { seconds: 0 } })).body.taskId as string;
    const waiting = await job('bob', bobs);
    expect(waiting).toMatchObject({
      state: 'submitted',
      queue: { position: 1, ahead: 0, reason: 'no free slot' },
    });
    expect((await job('alice', flood[5] as string)).queue).toEqual({
      position: 5,
      ahead: 4,
      reason: 'no free slot',
    });
    await cancel('alice', running);
    // The freed slot is globex's: acme's five queued jobs wait.
    await until('bob', bobs, 'completed');
    for (const id of flood.slice(2)) expect((await job('alice', id)).state).toBe('submitted');
    for (const id of flood.slice(1)) await cancel('alice', id);
  });

  it("a priority reorders the caller's own queue only, and shows on the handle", async () => {
    const running = (await long('alice')).body.taskId as string;
    await until('alice', running, 'working');
    const plain = (await long('carol')).body.taskId as string;
    const urgent = (await long('carol', { priority: 3 })).body;
    expect(urgent.queue).toMatchObject({ position: 1 });
    expect(await job('carol', urgent.taskId)).toMatchObject({ priority: 3, queue: { position: 1 } });
    // The plain job's standing, counted by its create, is kept up to a second: then it is behind.
    await eventually(async () => ((await job('carol', plain)).queue.position === 2 ? true : undefined));
    // Through A2A, the message's metadata carries it; the handle extension shows the standing.
    const sent = await agent.as('bob').rpc(
      'SendMessage',
      {
        message: skillMessage('sleep', { seconds: 600 }, { metadata: { priority: 1 } }),
        configuration: { returnImmediately: true },
      },
      { version: '1.0' },
    );
    const taskId = sent.body.result.task.id as string;
    const task = await getTask(agent.as('bob'), taskId);
    expect(task.metadata['https://taskhandle.dev/extensions/task-handle/v1']).toMatchObject({
      priority: 1,
      queue: { position: 1, ahead: 0 },
    });
    for (const [who, id] of [
      ['alice', running],
      ['carol', plain],
      ['carol', urgent.taskId],
      ['bob', taskId],
    ] as const) {
      await cancel(who, id);
    }
  });

  it('refuses a priority outside the bounds, saying which are allowed', async () => {
    const r = await long('alice', { priority: 4 });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('priority must be an integer from -3 to 3');
    const fractional = await long('alice', { priority: 1.5 });
    expect(fractional.status).toBe(400);
    expect(JSON.stringify(fractional.body)).toContain('priority');
  });
});
