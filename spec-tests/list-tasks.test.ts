import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';

describe('JSON-RPC v1.0: ListTasks', () => {
  let agent: Agent;
  const contextId = crypto.randomUUID();
  const completed: string[] = [];
  beforeAll(async () => {
    // Listing needs an identity: anonymous callers get an empty list (see auth-access.test.ts).
    agent = await launch({ apiKeys: { alice: 'acme' } });
    // Five finished tasks in one context, one after the other: their order is fixed.
    for (let i = 0; i < 5; i++) {
      const { task } = await send(agent, skillMessage('export', { rows: 2 }, { contextId }));
      completed.push(task.id);
    }
  });
  afterAll(async () => {
    await agent?.stop();
  });

  // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
  const list = async (params: Record<string, unknown>): Promise<any> => {
    const { body } = await agent.rpc('ListTasks', params, V1);
    if (body.error) throw new Error(JSON.stringify(body.error));
    return body.result;
  };

  it('pages with pageSize and pageToken to the end, newest first', async () => {
    const ids: string[] = [];
    const pages: number[] = [];
    let pageToken: string | undefined;
    do {
      const page = await list({ contextId, pageSize: 2, pageToken });
      expect(page.totalSize).toBe(5);
      expect(page.pageSize).toBe(2);
      expect(typeof page.nextPageToken).toBe('string');
      pages.push(page.tasks.length);
      ids.push(...page.tasks.map((t: { id: string }) => t.id));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(pages).toEqual([2, 2, 1]);
    expect(ids).toEqual([...completed].reverse());
  });

  it('gives an empty nextPageToken when everything fits on one page', async () => {
    const page = await list({ contextId });
    expect(page.tasks).toHaveLength(5);
    expect(page.nextPageToken).toBe('');
    expect(page.totalSize).toBe(5);
  });

  it('omits artifacts unless includeArtifacts is true', async () => {
    const plain = await list({ contextId, pageSize: 1 });
    expect(plain.tasks[0]).not.toHaveProperty('artifacts');
    const full = await list({ contextId, pageSize: 1, includeArtifacts: true });
    expect(full.tasks[0].artifacts).toHaveLength(1);
    expect(full.tasks[0].artifacts[0].name).toBe('export.csv');
  });

  it('filters by status and by contextId', async () => {
    const other = crypto.randomUUID();
    const { task: done } = await send(agent, skillMessage('export', { rows: 1 }, { contextId: other }));
    const running = await startTask(agent, skillMessage('sleep', { seconds: 30 }, { contextId: other }));
    await agent.waitForState(running.id, 'TASK_STATE_WORKING');

    const working = await list({ contextId: other, status: 'TASK_STATE_WORKING' });
    expect(working.tasks.map((t: { id: string }) => t.id)).toEqual([running.id]);
    expect(working.totalSize).toBe(1);
    const finished = await list({ contextId: other, status: 'TASK_STATE_COMPLETED' });
    expect(finished.tasks.map((t: { id: string }) => t.id)).toEqual([done.id]);
    const both = await list({ contextId: other });
    expect(both.tasks.map((t: { id: string }) => t.id).sort()).toEqual([done.id, running.id].sort());
    expect(both.tasks.every((t: { contextId: string }) => t.contextId === other)).toBe(true);

    const all = await list({ pageSize: 100 });
    expect(all.totalSize).toBe(7);
    const workingAnywhere = await list({ status: 'TASK_STATE_WORKING' });
    expect(workingAnywhere.tasks.map((t: { id: string }) => t.id)).toEqual([running.id]);

    await agent.rpc('CancelTask', { id: running.id }, V1);
    const canceled = await list({ status: 'TASK_STATE_CANCELED' });
    expect(canceled.tasks.map((t: { id: string }) => t.id)).toEqual([running.id]);
  });

  it('filters by statusTimestampAfter, including a task updated at exactly that time', async () => {
    const ids = [...completed].reverse();
    const page = await list({ contextId });
    const stamps = page.tasks.map((t: { status: { timestamp: string } }) => t.status.timestamp);
    // "Only tasks with a status timestamp time greater than or equal to this value" (a2a.proto).
    const expected = ids.filter((_, i) => stamps[i] >= stamps[2]);
    expect(expected.length).toBeGreaterThanOrEqual(3);
    const since = await list({ contextId, statusTimestampAfter: stamps[2] });
    expect(since.tasks.map((t: { id: string }) => t.id)).toEqual(expected);
    expect(since.totalSize).toBe(expected.length);
    const later = await list({
      contextId,
      statusTimestampAfter: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(later.tasks).toEqual([]);
    const { body } = await agent.rpc('ListTasks', { statusTimestampAfter: 'yesterday' }, V1);
    expect(body.error.code).toBe(-32602);
  });

  it('honours historyLength', async () => {
    const page = await list({ contextId, pageSize: 1, historyLength: 0 });
    expect(page.tasks[0].history ?? []).toEqual([]);
    const withHistory = await list({ contextId, pageSize: 1 });
    expect(withHistory.tasks[0].history).toHaveLength(1);
  });

  it('refuses a bad pageSize, pageToken or status with -32602', async () => {
    for (const params of [
      { pageSize: 0 },
      { pageSize: 1000 },
      { pageToken: 'not-a-token' },
      { historyLength: -1 },
    ]) {
      const { body } = await agent.rpc('ListTasks', params, V1);
      expect(body.error?.code, JSON.stringify(params)).toBe(-32602);
    }
  });
});
