import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';

/** v1.0 GetTask over REST: served by the SDK's transport, the reference for the JSON-RPC fast path. */
async function restTask(agent: Agent, id: string, historyLength?: number): Promise<unknown> {
  const query = historyLength === undefined ? '' : `?historyLength=${historyLength}`;
  const res = await fetch(`${agent.url}/rest/tasks/${id}${query}`, { headers: { 'A2A-Version': '1.0' } });
  expect(res.status).toBe(200);
  return res.json();
}

describe('GetTask fast path (JSON-RPC v1.0, cached per task version; REST and gRPC v1.0 share the cache)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch();
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('answers exactly what the SDK transport answers, for every historyLength', async () => {
    const task = await startTask(agent, skillMessage('export', { rows: 30, chunkRows: 10 }));
    await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
    for (const historyLength of [undefined, 0, 1, 5]) {
      const polled = await getTask(agent, task.id, historyLength);
      expect(polled, `historyLength ${historyLength}`).toEqual(await restTask(agent, task.id, historyLength));
      // The second answer comes from the cache: still the same.
      expect(await getTask(agent, task.id, historyLength)).toEqual(polled);
    }
  });

  it('never answers a stale task: every change of a running task shows in the next poll', async () => {
    const task = await startTask(agent, skillMessage('export', { rows: 40, chunkRows: 10, delayMs: 100 }));
    const seen: string[] = [];
    // biome-ignore lint/suspicious/noExplicitAny: tasks are inspected freely in tests
    const chunks = (t: any): number => t.artifacts?.[0]?.parts?.length ?? 0;
    for (;;) {
      // biome-ignore lint/suspicious/noExplicitAny: see above
      const before: any = await restTask(agent, task.id);
      const polled = await getTask(agent, task.id);
      const state = polled.status.state;
      // At least as new as what the store held just before: a cached answer is never behind.
      expect(chunks(polled)).toBeGreaterThanOrEqual(chunks(before));
      expect(Date.parse(polled.status.timestamp)).toBeGreaterThanOrEqual(Date.parse(before.status.timestamp));
      const stamp = `${state} ${chunks(polled)}`;
      if (seen.at(-1) !== stamp) seen.push(stamp);
      if (state === 'TASK_STATE_COMPLETED') break;
    }
    // It saw the artifact grow chunk by chunk before the end, not one frozen snapshot.
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.at(-1)).toBe('TASK_STATE_COMPLETED 4');
  });

  // REST and gRPC v1.0 GetTask share the cached Task (read only, per version) with this fast path.
  it('over REST too, every change of a running task shows in the next GetTask', async () => {
    const task = await startTask(agent, skillMessage('export', { rows: 40, chunkRows: 10, delayMs: 100 }));
    const seen: string[] = [];
    for (;;) {
      // biome-ignore lint/suspicious/noExplicitAny: tasks are inspected freely in tests
      const t: any = await restTask(agent, task.id);
      const stamp = `${t.status.state} ${t.artifacts?.[0]?.parts?.length ?? 0}`;
      if (seen.at(-1) !== stamp) seen.push(stamp);
      if (t.status.state === 'TASK_STATE_COMPLETED') break;
    }
    expect(seen.length).toBeGreaterThan(2);
    expect(seen.at(-1)).toBe('TASK_STATE_COMPLETED 4');
    // And the same task by JSON-RPC, from the same entry: identical.
    expect(await getTask(agent, task.id)).toEqual(await restTask(agent, task.id));
  });

  it('leaves errors to the SDK path: unknown task, bad historyLength, missing id', async () => {
    expect((await agent.rpc('GetTask', { id: 'nope' }, V1)).body.error?.code).toBe(-32001);
    const task = await startTask(agent, skillMessage('export', { rows: 1 }));
    expect((await agent.rpc('GetTask', { id: task.id, historyLength: -1 }, V1)).body.error?.code).toBe(
      -32602,
    );
    expect((await agent.rpc('GetTask', {}, V1)).body.error?.code).toBe(-32602);
  });

  // The fast path runs before the params are checked in full: what the full check refuses, it must not serve.
  it('serves no params the full check refuses: a tenant of another type, a bad proto-named history length', async () => {
    const task = await startTask(agent, skillMessage('export', { rows: 1 }));
    for (const params of [
      { id: task.id, tenant: 0 },
      { id: task.id, tenant: false },
      { id: task.id, historyLength: 1, history_length: 'many' },
      { id: task.id, history_length: -2 },
    ]) {
      const { body } = await agent.rpc('GetTask', params, V1);
      expect(body.error?.code, JSON.stringify(params)).toBe(-32602);
      expect(body.result).toBeUndefined();
    }
    // Both names of the field are read, as the SDK's decoder reads them.
    const { body } = await agent.rpc('GetTask', { id: task.id, history_length: 0 }, V1);
    expect(body.result?.id).toBe(task.id);
  });
});
