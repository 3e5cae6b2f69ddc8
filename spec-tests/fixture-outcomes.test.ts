import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, rpcStream, send, V1 } from './a2a.js';
import { type Agent, launch, tempDbPath, userMessage } from './harness.js';
import { openSse } from './sse.js';

/**
 * What the built-in skills never do (ask for input, answer with a message, reject), seen through the
 * conformance fixture (`serve --conformance`), which picks its behaviour by the messageId's prefix.
 */
const fixtureMessage = (prefix: string, text = 'go') =>
  userMessage(text, { messageId: `${prefix}-${crypto.randomUUID()}` });

const texts = (task: { history?: { parts: { text?: string }[] }[] }) =>
  (task.history ?? []).map((m) => m.parts.map((p) => p.text ?? '').join(''));

describe('input-required, direct replies and rejections (conformance fixture)', () => {
  let agent: Agent;
  const dbPath = tempDbPath();
  beforeAll(async () => {
    // As a principal: ListTasks needs an identity (anonymous callers get an empty list).
    agent = await launch({
      conformance: true,
      dbPath,
      apiKeys: { alice: 'acme' },
      env: { LEASE_MS: '1000', RUNNER_POLL_MS: '100' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('requestInput parks the task in input-required; the answer runs it to completion', async () => {
    const { task } = await send(agent, fixtureMessage('tck-input-required'));
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(task.status.message.parts).toEqual([{ text: 'Please provide more input' }]);
    const { body } = await agent.rpc('ListTasks', { status: 'TASK_STATE_INPUT_REQUIRED' }, V1);
    expect(body.result.tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);

    const stream = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    const answered = await send(agent, userMessage('here you are', { taskId: task.id }));
    expect(answered.task.id).toBe(task.id);
    expect(answered.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(answered.task.status.message.parts).toEqual([{ text: 'Received: here you are' }]);
    expect(texts(answered.task)).toEqual(['go', 'Please provide more input', 'here you are']);

    const events = (await stream.rest()).map((e) => e.data.result);
    expect(events[0].task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    // The reply is the result (no artifact of the job's own): written as the artifact "reply" too.
    expect(
      events.slice(1).map((e) => e.statusUpdate?.status.state ?? e.artifactUpdate?.artifact.name),
    ).toEqual(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING', 'reply', 'TASK_STATE_COMPLETED']);
    expect(events[3].artifactUpdate.artifact.parts).toEqual([{ text: 'Received: here you are' }]);
    expect(answered.task.artifacts).toEqual([
      expect.objectContaining({ artifactId: 'reply', parts: [{ text: 'Received: here you are' }] }),
    ]);
  });

  // Spec 11.7: a stream closes when the task reaches a terminal or interrupted state, so that the
  // caller can answer; the SDK's clients loop over the stream until it ends.
  it('SendStreamingMessage closes its stream at input-required; the answer streams to the end', async () => {
    const first = await rpcStream(
      agent,
      'SendStreamingMessage',
      { message: fixtureMessage('tck-input-required') },
      V1,
    );
    const asked = (await first.rest()).map((e) => e.data.result);
    const taskId = asked[0].task.id;
    expect(asked.at(-1).statusUpdate.status.state).toBe('TASK_STATE_INPUT_REQUIRED');

    const second = await rpcStream(
      agent,
      'SendStreamingMessage',
      { message: userMessage('my answer', { taskId }) },
      V1,
    );
    const answered = (await second.rest()).map((e) => e.data.result);
    expect(answered[0].task.id).toBe(taskId);
    expect(answered.at(-1).statusUpdate.status).toMatchObject({
      state: 'TASK_STATE_COMPLETED',
      message: { parts: [{ text: 'Received: my answer' }] },
    });
  });

  it('a v0.3 message/stream marks the input-required update final', async () => {
    const stream = await rpcStream(agent, 'message/stream', {
      message: {
        kind: 'message',
        messageId: `tck-input-required-${crypto.randomUUID()}`,
        role: 'user',
        parts: [{ kind: 'text', text: 'go' }],
      },
    });
    const events = (await stream.rest()).map((e) => e.data.result);
    expect(events.at(-1)).toMatchObject({
      kind: 'status-update',
      final: true,
      status: { state: 'input-required' },
    });
  });

  it('a v0.3 REST message:stream marks the input-required update final too', async () => {
    const stream = await openSse(`${agent.url}/rest/v1/message:stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...agent.credentials },
      body: JSON.stringify({
        message: {
          messageId: `tck-input-required-${crypto.randomUUID()}`,
          role: 'ROLE_USER',
          content: [{ text: 'go' }],
        },
      }),
    });
    const events = await stream.rest();
    expect(events.at(-1)?.data.statusUpdate).toMatchObject({
      final: true,
      status: { state: 'TASK_STATE_INPUT_REQUIRED' },
    });
  });

  // The kit sends GetTask params by their proto names (`history_length`), which protobuf JSON allows.
  it('GetTask history_length (the proto name) limits the history as historyLength does', async () => {
    const { task } = await send(agent, fixtureMessage('tck-input-required'));
    await send(agent, userMessage('more', { taskId: task.id }));
    for (const [name, n] of [
      ['history_length', 1],
      ['history_length', 2],
      ['historyLength', 1],
    ] as const) {
      // Twice: the second answer comes from the poll cache.
      for (const _ of [1, 2]) {
        const { body } = await agent.rpc('GetTask', { id: task.id, [name]: n }, V1);
        expect(body.result.history.map((m: { parts: { text: string }[] }) => m.parts[0]?.text)).toEqual(
          ['Please provide more input', 'more'].slice(-n),
        );
      }
    }
  });

  it('follow-ups keyed tck-input-required keep the task asking; another message completes it', async () => {
    const { task } = await send(agent, fixtureMessage('tck-input-required'));
    for (const text of ['first', 'second']) {
      const asked = await send(agent, { ...fixtureMessage('tck-input-required', text), taskId: task.id });
      expect(asked.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    }
    const done = await send(agent, userMessage('done', { taskId: task.id }));
    expect(done.task.status.state).toBe('TASK_STATE_COMPLETED');
    const users = done.task.history.filter((m: { role: string }) => m.role === 'ROLE_USER');
    expect(users.map((m: { parts: { text: string }[] }) => m.parts[0]?.text)).toEqual([
      'go',
      'first',
      'second',
      'done',
    ]);
  });

  it('an input-required task can be canceled', async () => {
    const { task } = await send(agent, fixtureMessage('tck-input-required'));
    const { body } = await agent.rpc('CancelTask', { id: task.id }, V1);
    expect(body.result.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('an input-required task waits through a kill -9 and takes its answer afterwards', async () => {
    const { task } = await send(agent, fixtureMessage('tck-input-required'));
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    await agent.kill9();
    // The same principal after the restart (a new key, the same owner).
    agent = await launch({
      conformance: true,
      dbPath,
      apiKeys: { alice: 'acme' },
      env: { LEASE_MS: '1000', RUNNER_POLL_MS: '100' },
    });
    expect((await getTask(agent, task.id)).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const answered = await send(agent, userMessage('after the crash', { taskId: task.id }));
    expect(answered.task.status.message.parts).toEqual([{ text: 'Received: after the crash' }]);
  });

  it('a direct reply is a Message, and no task is made', async () => {
    const before = (await agent.rpc('ListTasks', {}, V1)).body.result.totalSize;
    const v1 = await send(agent, fixtureMessage('tck-message-response'));
    expect(v1.task).toBeUndefined();
    expect(v1.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'Direct message response' }] });
    const v03 = await agent.rpc('message/send', {
      message: {
        kind: 'message',
        messageId: `tck-message-response-${crypto.randomUUID()}`,
        role: 'user',
        parts: [{ kind: 'text', text: 'x' }],
      },
    });
    expect(v03.body.result).toMatchObject({
      kind: 'message',
      role: 'agent',
      parts: [{ kind: 'text', text: 'Direct message response' }],
    });
    expect((await agent.rpc('ListTasks', {}, V1)).body.result.totalSize).toBe(before);
  });

  it('a rejected task ends rejected with its message', async () => {
    const { task } = await send(agent, fixtureMessage('tck-reject-task'));
    expect(task.status.state).toBe('TASK_STATE_REJECTED');
    expect(task.status.message.parts).toEqual([{ text: 'rejected' }]);
    const { body } = await agent.rpc('CancelTask', { id: task.id }, V1);
    expect(body.error.code).toBe(-32002);
  });

  // The v1.0 kit names every messageId tck-<test>-<run>: a blocking send of a test the fixture has no
  // script for must come back settled, not wait out the send's bound on an open task.
  it('an unknown tck- prefix completes at once, saying so; other ids open a task that stays working', async () => {
    const messageId = `tck-no-such-test-${crypto.randomUUID()}`;
    const { task } = await send(agent, userMessage('go', { messageId }));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.status.message.parts).toEqual([{ text: `Unhandled messageId prefix: ${messageId}` }]);

    const open = await send(agent, userMessage('go'), { returnImmediately: true });
    await agent.waitForState(open.task.id, 'TASK_STATE_WORKING');
    await agent.rpc('CancelTask', { id: open.task.id }, V1);
  });

  it('a part of a media type the card does not list is refused with ContentTypeNotSupported', async () => {
    const refused = await agent.rpc(
      'SendMessage',
      {
        message: {
          messageId: `tck-complete-task-${crypto.randomUUID()}`,
          role: 'ROLE_USER',
          parts: [{ raw: 'dGNr', mediaType: 'application/x-unsupported-tck-type' }],
        },
      },
      V1,
    );
    expect(refused.body.error.code).toBe(-32005);
    expect(refused.body.error.message).toContain('text/plain, application/json');
    const before = (await agent.rpc('ListTasks', {}, V1)).body.result.totalSize;
    // Listed types (parameters and case aside), and parts that name no media type, are taken.
    const taken = await send(agent, {
      messageId: `tck-complete-task-${crypto.randomUUID()}`,
      role: 'ROLE_USER',
      parts: [{ text: 'hi', mediaType: 'Text/Plain; charset=utf-8' }, { data: { a: 1 } }],
    });
    expect(taken.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await agent.rpc('ListTasks', {}, V1)).body.result.totalSize).toBe(before + 1);
    // The same rule for a follow-up message to a task, and over HTTP+JSON (v1.0 maps it to 400).
    const { task } = await send(agent, fixtureMessage('tck-input-required'));
    const rest = await fetch(`${agent.url}/rest/message:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...agent.credentials },
      body: JSON.stringify({
        message: {
          messageId: crypto.randomUUID(),
          taskId: task.id,
          role: 'ROLE_USER',
          parts: [{ url: 'https://example.com/a.png', mediaType: 'image/png' }],
        },
      }),
    });
    expect(rest.status).toBeGreaterThanOrEqual(400);
    expect(rest.status).toBeLessThan(500);
    expect(JSON.stringify(await rest.json())).toContain('image/png');
    expect((await getTask(agent, task.id)).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('a chunked artifact streams as appends, the last one marked', async () => {
    const stream = await rpcStream(
      agent,
      'SendStreamingMessage',
      { message: fixtureMessage('tck-stream-artifact-chunked') },
      V1,
    );
    const events = (await stream.rest()).map((e) => e.data.result);
    const chunks = events.filter((e) => e.artifactUpdate).map((e) => e.artifactUpdate);
    const fromSnapshot = events[0].task.artifacts?.[0]?.parts ?? [];
    expect([...fromSnapshot, ...chunks.flatMap((c) => c.artifact.parts)]).toEqual([
      { text: 'chunk-1 ' },
      { text: 'chunk-2' },
    ]);
    expect(chunks.at(-1)).toMatchObject({ append: true, lastChunk: true });
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    const stored = await getTask(agent, events[0].task.id);
    expect(stored.artifacts[0].parts).toEqual([{ text: 'chunk-1 ' }, { text: 'chunk-2' }]);
  });
});
