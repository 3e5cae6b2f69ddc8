import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  artifactText,
  csvLines,
  getTask,
  HANDLE,
  legacyMessage,
  rpcStream,
  send,
  skillMessage,
  startTask,
  V1,
} from './a2a.js';
import { type Agent, launch, userMessage } from './harness.js';

describe('no second copies', () => {
  let agent: Agent;
  beforeAll(async () => {
    // As a principal: countIn uses ListTasks, which needs an identity.
    agent = await launch({ apiKeys: { alice: 'acme' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** How many tasks of one context the server holds. */
  const countIn = async (contextId: string): Promise<number> => {
    const { body } = await agent.rpc('ListTasks', { contextId, pageSize: 100 }, V1);
    return body.result.totalSize;
  };

  /** The state changes in a task's whole event log, replayed from the start (progress reports left out). */
  const loggedStates = async (id: string): Promise<string[]> => {
    const events = await (
      await rpcStream(agent, 'SubscribeToTask', { id }, { ...V1, lastEventId: '0' })
    ).rest();
    return events
      .map((e) => e.data.result.statusUpdate)
      .filter((u) => u && !u.metadata?.[HANDLE]?.progress)
      .map((u) => u.status.state);
  };

  it('a retried send with the same messageId returns the same task and starts nothing new', async () => {
    const contextId = crypto.randomUUID();
    const message = skillMessage('export', { rows: 3, chunkRows: 1, delayMs: 100 }, { contextId });
    const first = await startTask(agent, message);
    const retry = await startTask(agent, message);
    expect(retry.id).toBe(first.id);
    const done = await agent.waitForState(first.id, 'TASK_STATE_COMPLETED');
    // A retry after the end returns the finished task, unchanged.
    const late = await send(agent, message);
    expect(late.task.id).toBe(first.id);
    expect(late.task.status).toEqual(done.status);
    expect(late.task.artifacts).toEqual(done.artifacts);
    expect(await countIn(contextId)).toBe(1);
    expect(done.history).toHaveLength(1);
    expect(await loggedStates(first.id)).toEqual([
      'TASK_STATE_SUBMITTED',
      'TASK_STATE_WORKING',
      'TASK_STATE_COMPLETED',
    ]);
    expect(csvLines(artifactText(done.artifacts[0]))).toHaveLength(4);
  });

  it('concurrent retries of one message make one task', async () => {
    const contextId = crypto.randomUUID();
    const message = skillMessage('sleep', { seconds: 0.3 }, { contextId });
    const tasks = await Promise.all(Array.from({ length: 8 }, () => startTask(agent, message)));
    expect(new Set(tasks.map((t) => t.id)).size).toBe(1);
    expect(await countIn(contextId)).toBe(1);
  });

  it('the same messageId over another protocol version or binding is the same message', async () => {
    const contextId = crypto.randomUUID();
    const message = skillMessage('sleep', { seconds: 0 }, { contextId });
    const { task } = await send(agent, message);
    const legacy = legacyMessage([{ kind: 'data', data: { skill: 'sleep', input: { seconds: 0 } } }], {
      messageId: message.messageId,
      contextId,
    });
    const v03 = await agent.rpc('message/send', { message: legacy, configuration: { blocking: true } });
    expect(v03.body.result.id).toBe(task.id);
    const rest = await fetch(`${agent.url}/rest/message:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...agent.credentials },
      body: JSON.stringify({ message }),
    });
    expect(((await rest.json()) as { task: { id: string } }).task.id).toBe(task.id);
    expect(await countIn(contextId)).toBe(1);
  });

  it('a follow-up message to a running task joins its history and starts no second execution', async () => {
    const first = skillMessage('export', { rows: 5, chunkRows: 1, delayMs: 150 });
    const task = await startTask(agent, first);
    await agent.waitForState(task.id, 'TASK_STATE_WORKING');
    const follow = userMessage('any news?', { taskId: task.id });
    const reply = await send(agent, follow, { returnImmediately: true });
    expect(reply.task.id).toBe(task.id);
    expect(reply.task.status.state).toBe('TASK_STATE_WORKING');
    expect(reply.task.history.at(-1).messageId).toBe(follow.messageId);
    // The same follow-up again is a retry: recorded once.
    const again = await send(agent, follow, { returnImmediately: true });
    expect(again.task.id).toBe(task.id);

    const done = await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
    expect(done.history.map((m: { messageId: string }) => m.messageId)).toEqual([
      first.messageId,
      follow.messageId,
    ]);
    expect(csvLines(artifactText(done.artifacts[0]))).toHaveLength(6);
    expect(await loggedStates(task.id)).toEqual([
      'TASK_STATE_SUBMITTED',
      'TASK_STATE_WORKING',
      'TASK_STATE_COMPLETED',
    ]);
    expect((await getTask(agent, task.id)).metadata).toEqual(done.metadata);
  });

  it('a follow-up whose contextId differs from the task is refused', async () => {
    const task = await startTask(agent, skillMessage('sleep', { seconds: 30 }));
    const { body } = await agent.rpc(
      'SendMessage',
      { message: userMessage('hi', { taskId: task.id, contextId: crypto.randomUUID() }) },
      V1,
    );
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain('contextId');
    await agent.rpc('CancelTask', { id: task.id }, V1);
  });
});
