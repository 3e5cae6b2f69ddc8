import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, csvLines, getTask, HANDLE, send, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch, userMessage } from './harness.js';

describe('JSON-RPC v1.0: send, get, cancel', () => {
  let agent: Agent;
  let bounded: Agent;
  let keptAlive: Agent;
  beforeAll(async () => {
    // As a principal: task ids are UUIDs when callers are authenticated (anonymous ones get 128
    // random bits, see auth-access.test.ts).
    const apiKeys = { alice: 'acme' };
    [agent, bounded, keptAlive] = await Promise.all([
      launch({ apiKeys }),
      launch({ apiKeys, env: { BLOCKING_TIMEOUT_MS: '300' } }),
      launch({ apiKeys, env: { BLOCKING_TIMEOUT_MS: '1500', SSE_KEEPALIVE_MS: '200' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([agent?.stop(), bounded?.stop(), keptAlive?.stop()]);
  });

  it('returns a non-terminal task at once with returnImmediately, which then completes', async () => {
    const task = await startTask(agent, skillMessage('export', { rows: 3, chunkRows: 1, delayMs: 300 }));
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(task.status.state);
    expect(task.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(task.contextId).toMatch(/^[0-9a-f-]{36}$/);
    const done = await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
    expect(done.contextId).toBe(task.contextId);
    expect(done.status.message.parts).toEqual([{ text: 'Exported 3 rows to export.csv' }]);
  });

  it('a blocking send waits for the terminal state', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 5, chunkRows: 2, delayMs: 50 }));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.status.message.role).toBe('ROLE_AGENT');
    expect(task.status.message.parts).toEqual([{ text: 'Exported 5 rows to export.csv' }]);
    expect(csvLines(artifactText(task.artifacts[0]))).toHaveLength(6);
  });

  it('a blocking send returns the task as it stands after BLOCKING_TIMEOUT_MS, its status message saying so', async () => {
    const { task } = await send(bounded, skillMessage('sleep', { seconds: 30 }));
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    // Words a person or a model reads (a client that shows only the status text shows them).
    const note = task.status.message;
    expect(note).toMatchObject({ role: 'ROLE_AGENT', taskId: task.id, contextId: task.contextId });
    const { pollIntervalMs } = task.metadata[HANDLE];
    expect(pollIntervalMs).toBeGreaterThan(0);
    expect(note.parts).toHaveLength(1);
    expect(note.parts[0].text).toMatch(
      /^Still working after \d+(\.\d)? s; this answer stops waiting here, the task goes on\. /,
    );
    expect(note.parts[0].text).toContain(
      `Poll GetTask ${task.id} every ${pollIntervalMs} ms until it ends, or subscribe (SubscribeToTask ${task.id})`,
    );
    expect(note.metadata[HANDLE]).toEqual({ notice: 'still-working', waitedMs: expect.any(Number) });
    expect(note.metadata[HANDLE].waitedMs).toBeGreaterThanOrEqual(300);
    // The handle metadata is the task's, as on every answer.
    expect(task.metadata[HANDLE]).toMatchObject({ ttlMs: expect.any(Number), expiresAt: expect.any(String) });
    // The note is the answer's only: the task as stored has no such status message.
    const stored = await getTask(bounded, task.id);
    expect(stored.status.state).toBe('TASK_STATE_WORKING');
    expect(stored.status.message).toBeUndefined();
    const { body } = await bounded.rpc('CancelTask', { id: task.id }, V1);
    expect(body.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(body.result.status.message?.parts?.[0]?.text ?? '').not.toContain('Still working');
  });

  it('a blocking send that waits past SSE_KEEPALIVE_MS writes spaces before its JSON; a quick one is answered whole', async () => {
    const held = await rawPost(keptAlive, {
      jsonrpc: '2.0',
      id: 3,
      method: 'SendMessage',
      params: { message: skillMessage('sleep', { seconds: 30 }) },
    });
    expect(held.status).toBe(200);
    expect(held.headers['content-type']).toBe('application/json');
    expect(held.headers['content-length']).toBeUndefined();
    // The first bytes (spaces) came long before the answer: a proxy's idle timer saw them.
    expect(held.firstByteMs).toBeLessThan(held.lastByteMs - 400);
    expect(held.body).toMatch(/^ {3,}\{"jsonrpc":"2.0","id":3,"result":/);
    const { task } = JSON.parse(held.body).result;
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    expect(task.status.message.parts[0].text).toMatch(/^Still working after 1\.\d s/);
    await keptAlive.rpc('CancelTask', { id: task.id }, V1);

    const quick = await rawPost(keptAlive, {
      jsonrpc: '2.0',
      id: 4,
      method: 'SendMessage',
      params: { message: skillMessage('export', { rows: 1 }) },
    });
    expect(quick.headers['content-length']).toBe(String(Buffer.byteLength(quick.body)));
    expect(JSON.parse(quick.body).result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('GetTask honours historyLength (absent, 1, 0)', async () => {
    const first = skillMessage('sleep', { seconds: 30 });
    const task = await startTask(agent, first);
    const follow = userMessage('how far along?', { taskId: task.id });
    await send(agent, follow, { returnImmediately: true });

    const all = await getTask(agent, task.id);
    expect(all.history.map((m: { messageId: string }) => m.messageId)).toEqual([
      first.messageId,
      follow.messageId,
    ]);
    expect(all.history[1]).toMatchObject({
      role: 'ROLE_USER',
      taskId: task.id,
      contextId: task.contextId,
      parts: [{ text: 'how far along?' }],
    });
    const one = await getTask(agent, task.id, 1);
    expect(one.history.map((m: { messageId: string }) => m.messageId)).toEqual([follow.messageId]);
    const none = await getTask(agent, task.id, 0);
    expect(none.history ?? []).toEqual([]);
    expect(none.id).toBe(task.id);

    const { body } = await agent.rpc('GetTask', { id: task.id, historyLength: -1 }, V1);
    expect(body.error.code).toBe(-32602);
    await agent.rpc('CancelTask', { id: task.id }, V1);
  });

  it('CancelTask: working -> canceled; terminal -> TaskNotCancelable; unknown -> TaskNotFound', async () => {
    const task = await startTask(agent, skillMessage('sleep', { seconds: 30 }));
    await agent.waitForState(task.id, 'TASK_STATE_WORKING');
    const canceled = await agent.rpc('CancelTask', { id: task.id }, V1);
    expect(canceled.body.result.id).toBe(task.id);
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(canceled.body.result.status.message.parts).toEqual([{ text: 'Canceled by request' }]);
    expect((await getTask(agent, task.id)).status.state).toBe('TASK_STATE_CANCELED');

    const again = await agent.rpc('CancelTask', { id: task.id }, V1);
    expect(again.body.error.code).toBe(-32002);
    expect(again.body.result).toBeUndefined();

    const unknown = await agent.rpc('CancelTask', { id: 'no-such-task' }, V1);
    expect(unknown.body.error.code).toBe(-32001);
    const get = await agent.rpc('GetTask', { id: 'no-such-task' }, V1);
    expect(get.body.error.code).toBe(-32001);
  });

  it('a message to a terminal task is refused with UnsupportedOperation (-32004)', async () => {
    const { task } = await send(agent, skillMessage('export', { rows: 1 }));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const { body } = await agent.rpc(
      'SendMessage',
      { message: userMessage('more', { taskId: task.id }) },
      V1,
    );
    expect(body.error.code).toBe(-32004);
    expect(body.error.message).toContain('completed');
    const after = await getTask(agent, task.id);
    expect(after.history).toHaveLength(1);
  });

  it('a message to an unknown task gives TaskNotFound', async () => {
    const { body } = await agent.rpc('SendMessage', { message: userMessage('hi', { taskId: 'nope' }) }, V1);
    expect(body.error.code).toBe(-32001);
  });
});

describe('JSON-RPC v1.0: the handle extension', () => {
  let agent: Agent;
  beforeAll(async () => {
    // As a principal: the skills' own TTLs apply (anonymous tasks are capped by ANONYMOUS_MAX_TTL_MS).
    agent = await launch({ apiKeys: { alice: 'acme' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('every task carries createdAt, lastUpdatedAt, pollIntervalMs, ttlMs, expiresAt', async () => {
    const exportTask = await startTask(agent, skillMessage('export', { rows: 1 }));
    const sleepTask = await startTask(agent, skillMessage('sleep', { seconds: 0 }));
    for (const [task, pollIntervalMs, ttlMs] of [
      [exportTask, 2000, 7 * 86_400_000],
      [sleepTask, 1000, 86_400_000],
    ] as const) {
      const handle = task.metadata[HANDLE];
      expect(handle.pollIntervalMs).toBe(pollIntervalMs);
      expect(handle.ttlMs).toBe(ttlMs);
      expect(new Date(handle.createdAt).toISOString()).toBe(handle.createdAt);
      expect(Date.parse(handle.expiresAt) - Date.parse(handle.createdAt)).toBe(ttlMs);
      expect(Date.parse(handle.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(handle.createdAt));
      const done = await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
      const after = done.metadata[HANDLE];
      expect(after.createdAt).toBe(handle.createdAt);
      expect(after.expiresAt).toBe(handle.expiresAt);
      expect(Date.parse(after.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(handle.lastUpdatedAt));
      expect(after.lastUpdatedAt).toBe(done.status.timestamp);
    }
  });

  it('reports progress while an export runs, and 100% at the end', async () => {
    const task = await startTask(agent, skillMessage('export', { rows: 10, chunkRows: 1, delayMs: 150 }));
    let seen: { percent: number; message: string } | undefined;
    for (let i = 0; i < 300 && !seen; i++) {
      const t = await getTask(agent, task.id, 0);
      const progress = t.metadata[HANDLE].progress;
      if (t.status.state === 'TASK_STATE_WORKING' && progress && progress.percent < 100) seen = progress;
      else await new Promise((r) => setTimeout(r, 30));
    }
    expect(seen).toBeDefined();
    const rows = Number(/^(\d+) of 10 rows$/.exec(seen?.message ?? '')?.[1]);
    expect(seen?.percent).toBe(rows * 10);
    const done = await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
    expect(done.metadata[HANDLE].progress).toEqual({ percent: 100, message: '10 of 10 rows' });
  });

  it('keeps caller metadata next to the handle', async () => {
    const { body } = await agent.rpc(
      'SendMessage',
      { message: skillMessage('sleep', { seconds: 0 }), metadata: { ticket: 'T-42' } },
      V1,
    );
    expect(body.result.task.metadata.ticket).toBe('T-42');
    expect(body.result.task.metadata[HANDLE].pollIntervalMs).toBe(1000);
  });
});

/** A JSON-RPC POST read by hand: its headers, its body as sent, and when its first and last bytes came. */
function rawPost(
  agent: Agent,
  body: unknown,
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  firstByteMs: number;
  lastByteMs: number;
}> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = request(
      agent.url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...agent.credentials },
      },
      (res) => {
        let text = '';
        let firstByteMs = -1;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (firstByteMs < 0) firstByteMs = Date.now() - started;
          text += chunk;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text,
            firstByteMs,
            lastByteMs: Date.now() - started,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
