import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, HANDLE, send, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';

const MAX_TTL_MS = 1500;

/**
 * Run with a sweeper that deletes expired tasks at once, and with one that never comes round during
 * the test: an expired task must look the same either way.
 */
describe.each([
  ['swept', '200'],
  ['expired, not yet swept', '600000'],
])('retention (%s)', (_, sweepIntervalMs) => {
  let agent: Agent;
  beforeAll(async () => {
    // As a principal: ListTasks needs an identity (and anonymous tasks have a retention cap of their own).
    agent = await launch({
      apiKeys: { alice: 'acme' },
      env: {
        MAX_TTL_MS: String(MAX_TTL_MS),
        SWEEP_INTERVAL_MS: sweepIntervalMs,
        // An expired job that was not swept yet still runs: do not wait long for it at stop.
        SHUTDOWN_TIMEOUT_MS: '500',
      },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** Polls until GetTask says TaskNotFound; returns that error. */
  const gone = (id: string) =>
    eventually(async () => {
      const { body } = await agent.rpc('GetTask', { id }, V1);
      return body.error;
    }, 10_000);

  it('caps ttlMs at MAX_TTL_MS; expiresAt = createdAt + ttlMs', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 1 }));
    const handle = task.metadata[HANDLE];
    expect(handle.ttlMs).toBe(MAX_TTL_MS);
    expect(Date.parse(handle.expiresAt) - Date.parse(handle.createdAt)).toBe(MAX_TTL_MS);
  });

  it('a finished task becomes TaskNotFound on every face after it expires', async () => {
    const contextId = crypto.randomUUID();
    const message = skillMessage('export', { rows: 1 }, { contextId });
    const { task } = await send(agent, message);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const error = await gone(task.id);
    expect(error.code).toBe(-32001);

    expect((await agent.rpc('tasks/get', { id: task.id })).body.error.code).toBe(-32001);
    expect((await agent.rpc('CancelTask', { id: task.id }, V1)).body.error.code).toBe(-32001);
    const rest = await fetch(`${agent.url}/rest/tasks/${task.id}`, {
      headers: { 'A2A-Version': '1.0', ...agent.credentials },
    });
    expect(rest.status).toBe(404);
    const { body } = await agent.rpc('ListTasks', { contextId }, V1);
    expect(body.result.tasks).toEqual([]);
    expect(body.result.totalSize).toBe(0);
    // A retry of the expired message is a new message now: it makes a new task.
    const retry = await send(agent, message);
    expect(retry.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(retry.task.id).not.toBe(task.id);
  });

  it('a task that expires while running is gone too, and the server keeps serving', async () => {
    const task = await startTask(agent, skillMessage('sleep', { seconds: 30 }));
    await agent.waitForState(task.id, 'TASK_STATE_WORKING');
    expect((await gone(task.id)).code).toBe(-32001);
    const health = await fetch(`${agent.url}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok' });
    const { task: next } = await send(agent, skillMessage('sleep', { seconds: 0 }));
    expect(next.status.state).toBe('TASK_STATE_COMPLETED');
  });
});
