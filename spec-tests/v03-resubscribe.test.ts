import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, legacyMessage, rpcStream } from './a2a.js';
import { type Agent, launch } from './harness.js';

/**
 * v0.3 tasks/resubscribe, served from the engine's subscription (legacy-subscribe.ts): what a
 * v0.3 client reads must stay what the SDK's v0.3 transport wrote (the envelope's key order, `final`
 * on the closing status, SSE error events for refusals in v0.3 codes), and the stream's slot is
 * held and given back as every stream's is.
 */
describe('v0.3 tasks/resubscribe', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: { MAX_STREAMS: '2' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const data = (skill: string, input: Record<string, unknown>) => ({ kind: 'data', data: { skill, input } });
  // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
  const start = async (skill: string, input: Record<string, unknown>): Promise<any> => {
    const message = legacyMessage([data(skill, input)]);
    const { body } = await agent.rpc('message/send', { message, configuration: { blocking: false } });
    return body.result;
  };
  // biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
  const state = async (id: string): Promise<any> => (await agent.rpc('tasks/get', { id })).body.result;

  it('writes each event as {"id","jsonrpc","result"} in v0.3 wire, with the event id in its metadata', async () => {
    const task = await start('export', { rows: 2, chunkRows: 1, delayMs: 100 });
    const stream = await rpcStream(agent, 'tasks/resubscribe', { id: task.id }, { id: 'r-1' });
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    const events = await stream.rest();
    for (const line of stream
      .raw()
      .split('\n')
      .filter((l) => l.startsWith('data: '))) {
      expect(line.startsWith('data: {"id":"r-1","jsonrpc":"2.0","result":{"kind":')).toBe(true);
    }
    expect(events[0]?.data.result).toMatchObject({ kind: 'task', id: task.id });
    const kinds = new Set(events.map((e) => e.data.result.kind));
    expect(kinds).toEqual(new Set(['task', 'status-update', 'artifact-update']));
    for (const e of events) {
      expect(e.data.result.metadata['https://taskhandle.dev/extensions/task-handle/v1'].eventId).toBe(e.id);
    }
    const finals = events.filter((e) => e.data.result.final === true);
    expect(finals).toHaveLength(1);
    expect(finals[0]).toBe(events.at(-1));
    expect(finals[0]?.data.result.status.state).toBe('completed');
  });

  it('marks final the status that ends the stream: a terminal one, and input-required (which the SDK leaves unmarked)', async () => {
    const task = await start('sleep', { seconds: 300 });
    await eventually(async () => ((await state(task.id)).status.state === 'working' ? true : undefined));
    const stream = await rpcStream(agent, 'tasks/resubscribe', { id: task.id });
    expect((await stream.next())?.data.result.kind).toBe('task');
    await agent.rpc('tasks/cancel', { id: task.id });
    const last = (await stream.rest()).at(-1)?.data.result;
    expect(last).toMatchObject({ kind: 'status-update', final: true, status: { state: 'canceled' } });

    const waiting = await start('approval', { action: 'Ship the v0.3 stream' });
    await eventually(async () =>
      (await state(waiting.id)).status.state === 'input-required' ? true : undefined,
    );
    const resumed = await rpcStream(agent, 'tasks/resubscribe', { id: waiting.id }, { lastEventId: '0' });
    const replay = await resumed.rest();
    expect(replay.at(-1)?.data.result).toMatchObject({ final: true, status: { state: 'input-required' } });
    expect(replay.slice(0, -1).every((e) => e.data.result.final !== true)).toBe(true);
  });

  it('refuses an unknown or ended task as an SSE error event in v0.3 codes', async () => {
    const unknown = await rpcStream(agent, 'tasks/resubscribe', { id: 'no-such-task' }, { id: 9 });
    expect(unknown.status).toBe(200);
    expect(unknown.headers.get('content-type')).toBe('text/event-stream');
    const [refusal, ...more] = await unknown.rest();
    expect(more).toHaveLength(0);
    expect(refusal?.id).toBeUndefined();
    expect(refusal?.data).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: expect.objectContaining({ code: -32001 }),
    });

    const done = await start('export', { rows: 1 });
    await eventually(async () => ((await state(done.id)).status.state === 'completed' ? true : undefined));
    const ended = await (await rpcStream(agent, 'tasks/resubscribe', { id: done.id })).rest();
    expect(ended.map((e) => e.data.error?.code)).toEqual([-32004]);
    // A resume past the last event of an ended task has nothing to send and ends at once.
    const past = await rpcStream(agent, 'tasks/resubscribe', { id: done.id }, { lastEventId: '100000' });
    expect(await past.rest()).toEqual([]);
  });

  it('counts against MAX_STREAMS, and a client that leaves gives its place back', async () => {
    const task = await start('sleep', { seconds: 300 });
    await eventually(async () => ((await state(task.id)).status.state === 'working' ? true : undefined));
    const open = [
      await rpcStream(agent, 'tasks/resubscribe', { id: task.id }),
      await rpcStream(agent, 'tasks/resubscribe', { id: task.id }),
    ];
    for (const s of open) expect((await s.next())?.data.result.kind).toBe('task');
    const third = await (await rpcStream(agent, 'tasks/resubscribe', { id: task.id })).rest();
    expect(third).toHaveLength(1);
    expect(third[0]?.data.error.code).toBe(-32054);
    expect(third[0]?.data.error.message).toContain('MAX_STREAMS');
    for (const s of open) s.close();
    const again = await eventually(async () => {
      const s = await rpcStream(agent, 'tasks/resubscribe', { id: task.id });
      const first = await s.next();
      if (first?.data.result?.kind === 'task') return s;
      return undefined;
    });
    again.close();
    await agent.rpc('tasks/cancel', { id: task.id });
  });
});

describe('v0.3 tasks/resubscribe at shutdown', () => {
  it('ends an open stream when the server stops', async () => {
    const agent = await launch();
    try {
      const message = legacyMessage([{ kind: 'data', data: { skill: 'sleep', input: { seconds: 300 } } }]);
      const { body } = await agent.rpc('message/send', { message, configuration: { blocking: false } });
      const stream = await rpcStream(agent, 'tasks/resubscribe', { id: body.result.id });
      expect((await stream.next())?.data.result.kind).toBe('task');
      const ending = stream.rest();
      await agent.stop();
      const rest = await ending;
      expect(rest.every((e) => e.data.result?.final !== true)).toBe(true);
    } finally {
      await agent.stop();
    }
  });
});
