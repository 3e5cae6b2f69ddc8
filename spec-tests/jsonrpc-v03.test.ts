import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, CSV_HEADER, csvLines, HANDLE, legacyMessage, rpcStream } from './a2a.js';
import { type Agent, launch } from './harness.js';

/** v0.3 peers send no A2A-Version header and use the slash-style method names. */
describe('JSON-RPC v0.3 (no A2A-Version header)', () => {
  let agent: Agent;
  let bounded: Agent;
  beforeAll(async () => {
    [agent, bounded] = await Promise.all([launch(), launch({ env: { BLOCKING_TIMEOUT_MS: '300' } })]);
  });
  afterAll(async () => {
    await Promise.all([agent?.stop(), bounded?.stop()]);
  });

  const skillPart = (skill: string, input: Record<string, unknown>) => ({
    kind: 'data',
    data: { skill, input },
  });

  // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
  const call = async (method: string, params: unknown): Promise<any> =>
    (await agent.rpc(method, params)).body;

  it('message/send with blocking false returns a non-terminal v0.3 task at once', async () => {
    const message = legacyMessage([skillPart('export', { rows: 3, chunkRows: 1, delayMs: 300 })]);
    const { result } = await call('message/send', { message, configuration: { blocking: false } });
    expect(result.kind).toBe('task');
    expect(['submitted', 'working']).toContain(result.status.state);
    expect(result.history[0]).toMatchObject({ kind: 'message', role: 'user', messageId: message.messageId });
    expect(result.metadata[HANDLE].pollIntervalMs).toBe(2000);
    const done = await agent.waitForState(result.id, 'TASK_STATE_COMPLETED');
    expect(done.contextId).toBe(result.contextId);

    const got = await call('tasks/get', { id: result.id });
    expect(got.result.kind).toBe('task');
    expect(got.result.status.state).toBe('completed');
    expect(got.result.status.message).toMatchObject({
      kind: 'message',
      role: 'agent',
      parts: [{ kind: 'text', text: 'Exported 3 rows to export.csv' }],
    });
  });

  it('message/send without blocking: true answers at once (docs/CONFORMANCE.md says why)', async () => {
    for (const configuration of [undefined, {}, { acceptedOutputModes: ['text/plain'] }]) {
      const message = legacyMessage([skillPart('sleep', { seconds: 30 })]);
      const { result } = (await bounded.rpc('message/send', { message, configuration })).body;
      expect(['submitted', 'working']).toContain(result.status.state);
      // It did not wait (a send that waited to the limit would say so in its status message).
      expect(result.status.message).toBeUndefined();
      await bounded.rpc('tasks/cancel', { id: result.id });
    }
  });

  it('message/send with blocking true past BLOCKING_TIMEOUT_MS: the status message says so, in v0.3 words', async () => {
    const message = legacyMessage([skillPart('sleep', { seconds: 30 })]);
    const { result } = (await bounded.rpc('message/send', { message, configuration: { blocking: true } }))
      .body;
    expect(result.status.state).toBe('working');
    expect(result.status.message).toMatchObject({ kind: 'message', role: 'agent', taskId: result.id });
    const [part] = result.status.message.parts;
    expect(part.kind).toBe('text');
    expect(part.text).toMatch(/^Still working after \d+(\.\d)? s; /);
    expect(part.text).toContain(
      `Poll tasks/get ${result.id} every ${result.metadata[HANDLE].pollIntervalMs} ms until it ends, ` +
        `or subscribe (tasks/resubscribe ${result.id})`,
    );
    const got = (await bounded.rpc('tasks/get', { id: result.id })).body.result;
    expect(got.status.state).toBe('working');
    expect(got.status.message).toBeUndefined();
    await bounded.rpc('tasks/cancel', { id: result.id });
  });

  it('message/send with blocking true waits and returns v0.3 file artifacts', async () => {
    const message = legacyMessage([skillPart('export', { rows: 4, chunkRows: 2 })]);
    const { result } = await call('message/send', { message, configuration: { blocking: true } });
    expect(result.kind).toBe('task');
    expect(result.status.state).toBe('completed');
    const [artifact] = result.artifacts;
    expect(artifact.name).toBe('export.csv');
    expect(artifact.parts).toHaveLength(2);
    expect(artifact.parts[0]).toMatchObject({
      kind: 'file',
      file: { mimeType: 'text/csv', name: 'export.csv' },
    });
    const lines = csvLines(artifactText(artifact));
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe(CSV_HEADER);
  });

  it('picks the default skill for a plain text part', async () => {
    const message = legacyMessage([{ kind: 'text', text: 'export 7 rows' }]);
    const { result } = await call('message/send', { message, configuration: { blocking: true } });
    expect(result.status.state).toBe('completed');
    expect(csvLines(artifactText(result.artifacts[0]))).toHaveLength(8);
  });

  it('tasks/get honours historyLength', async () => {
    const first = legacyMessage([skillPart('sleep', { seconds: 30 })]);
    const { result: task } = await call('message/send', {
      message: first,
      configuration: { blocking: false },
    });
    const follow = legacyMessage([{ kind: 'text', text: 'still there?' }], { taskId: task.id });
    const followed = await call('message/send', { message: follow, configuration: { blocking: false } });
    expect(followed.result.id).toBe(task.id);

    const all = await call('tasks/get', { id: task.id });
    expect(all.result.history.map((m: { messageId: string }) => m.messageId)).toEqual([
      first.messageId,
      follow.messageId,
    ]);
    const one = await call('tasks/get', { id: task.id, historyLength: 1 });
    expect(one.result.history.map((m: { messageId: string }) => m.messageId)).toEqual([follow.messageId]);
    await call('tasks/cancel', { id: task.id });
  });

  it('tasks/cancel: working -> canceled; terminal -> -32002; unknown -> -32001', async () => {
    const message = legacyMessage([skillPart('sleep', { seconds: 30 })]);
    const { result: task } = await call('message/send', { message, configuration: { blocking: false } });
    await agent.waitForState(task.id, 'TASK_STATE_WORKING');
    const canceled = await call('tasks/cancel', { id: task.id });
    expect(canceled.result).toMatchObject({ kind: 'task', id: task.id, status: { state: 'canceled' } });
    expect((await call('tasks/cancel', { id: task.id })).error.code).toBe(-32002);
    expect((await call('tasks/cancel', { id: 'no-such-task' })).error.code).toBe(-32001);
    expect((await call('tasks/get', { id: 'no-such-task' })).error.code).toBe(-32001);
  });

  it('a message to a terminal task gives -32004', async () => {
    const message = legacyMessage([skillPart('export', { rows: 1 })]);
    const { result: task } = await call('message/send', { message, configuration: { blocking: true } });
    expect(task.status.state).toBe('completed');
    const more = legacyMessage([{ kind: 'text', text: 'more' }], { taskId: task.id });
    expect((await call('message/send', { message: more })).error.code).toBe(-32004);
  });

  it('refuses an unknown skill or invalid input with -32602', async () => {
    const unknown = await call('message/send', { message: legacyMessage([skillPart('teleport', {})]) });
    expect(unknown.error.code).toBe(-32602);
    expect(unknown.error.message).toContain('"teleport"');
    const invalid = await call('message/send', {
      message: legacyMessage([skillPart('sleep', { seconds: -5 })]),
    });
    expect(invalid.error.code).toBe(-32602);
    expect(invalid.error.message).toContain('input.seconds');
  });

  it('message/stream: the task first, then v0.3 events in order, the last one final', async () => {
    const message = legacyMessage([skillPart('export', { rows: 2, chunkRows: 1 })]);
    const stream = await rpcStream(agent, 'message/stream', { message }, { id: 'req-7' });
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await stream.rest();
    const results = events.map((e) => e.data.result);
    expect(events.every((e) => e.data.jsonrpc === '2.0' && e.data.id === 'req-7')).toBe(true);
    expect(results[0].kind).toBe('task');
    const taskId = results[0].id;
    expect(results.slice(1).every((r) => r.taskId === taskId)).toBe(true);
    const last = results.at(-1);
    expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'completed' } });
    expect(results.slice(0, -1).some((r) => r.final === true)).toBe(false);
    const chunks = results.filter((r) => r.kind === 'artifact-update');
    const firstChunkInSnapshot = results[0].artifacts?.length ?? 0;
    expect(chunks.length + firstChunkInSnapshot).toBe(2);
    expect(chunks.at(-1).lastChunk).toBe(true);
  });

  it('tasks/resubscribe on a running task streams to its end', async () => {
    const message = legacyMessage([skillPart('export', { rows: 3, chunkRows: 1, delayMs: 200 })]);
    const { result: task } = await call('message/send', { message, configuration: { blocking: false } });
    const stream = await rpcStream(agent, 'tasks/resubscribe', { id: task.id });
    const results = (await stream.rest()).map((e) => e.data.result);
    expect(results[0]).toMatchObject({ kind: 'task', id: task.id });
    expect(results.at(-1)).toMatchObject({
      kind: 'status-update',
      final: true,
      status: { state: 'completed' },
    });
  });

  it('v0.3 streams carry event ids too, and resume with Last-Event-ID', async () => {
    const message = legacyMessage([skillPart('export', { rows: 4, chunkRows: 1, delayMs: 150 })]);
    const first = await rpcStream(agent, 'message/stream', { message });
    const seen = [await first.next(), await first.next()];
    first.close();
    const taskId = seen[0]?.data.result.id;
    const lastId = seen[1]?.id as string;
    expect(Number(lastId)).toBeGreaterThan(Number(seen[0]?.id));
    const resumed = await rpcStream(agent, 'tasks/resubscribe', { id: taskId }, { lastEventId: lastId });
    const rest = await resumed.rest();
    expect(Number(rest[0]?.id)).toBe(Number(lastId) + 1);
    expect(rest.some((e) => e.data.result.kind === 'task')).toBe(false);
    expect(rest.at(-1)?.data.result).toMatchObject({ kind: 'status-update', final: true, taskId });
  });

  it('tasks/resubscribe on an unknown task answers an error', async () => {
    const stream = await rpcStream(agent, 'tasks/resubscribe', { id: 'no-such-task' });
    const events = await stream.rest();
    expect(events).toHaveLength(1);
    expect(events[0]?.data.error.code).toBe(-32001);
  });

  it('A2A-Version: 0.3 is the same as no header', async () => {
    const message = legacyMessage([skillPart('export', { rows: 1 })]);
    const { body } = await agent.rpc(
      'message/send',
      { message, configuration: { blocking: true } },
      { headers: { 'A2A-Version': '0.3' } },
    );
    expect(body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
  });

  it('an unknown v0.3 method gives -32601', async () => {
    expect((await call('tasks/teleport', { id: 'x' })).error.code).toBe(-32601);
  });
});
