import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, getTask, HANDLE, rpcStream, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { openSse, type SseEvent, type SseStream, waitForComments } from './sse.js';

const ids = (events: SseEvent[]) => events.map((e) => Number(e.id));
const strictlyIncreasing = (ns: number[]) =>
  ns.every((n, i) => Number.isSafeInteger(n) && (i === 0 || n > (ns[i - 1] ?? 0)));
// biome-ignore lint/suspicious/noExplicitAny: events are inspected freely in tests
const result = (e: SseEvent | undefined): any => e?.data.result;

/** A slow export: one row per chunk, a pause after each. */
const slowExport = (rows: number) => skillMessage('export', { rows, chunkRows: 1, delayMs: 120 });

describe('SSE streams', () => {
  let agent: Agent;
  beforeAll(async () => {
    // As a principal: one test checks with ListTasks, which needs an identity.
    agent = await launch({ apiKeys: { alice: 'acme' }, env: { SSE_KEEPALIVE_MS: '200' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('SendStreamingMessage: the task first, then updates in order with increasing ids, closing at the end', async () => {
    const stream = await rpcStream(agent, 'SendStreamingMessage', { message: slowExport(4) }, V1);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await stream.rest();
    expect(events.every((e) => e.id !== undefined)).toBe(true);
    expect(strictlyIncreasing(ids(events))).toBe(true);

    const [first, ...updates] = events.map(result);
    expect(Object.keys(first)).toEqual(['task']);
    const task = first.task;
    for (const u of updates) {
      const [kind] = Object.keys(u);
      expect(['statusUpdate', 'artifactUpdate']).toContain(kind);
      expect(u[kind as string].taskId).toBe(task.id);
      expect(u[kind as string].contextId).toBe(task.contextId);
    }
    const states = updates.filter((u) => u.statusUpdate).map((u) => u.statusUpdate.status.state);
    expect(states.at(-1)).toBe('TASK_STATE_COMPLETED');
    expect(states.slice(0, -1).every((s) => s === 'TASK_STATE_WORKING')).toBe(true);

    // The snapshot's artifact plus the appended chunks, in stream order, rebuild the stored file.
    const chunks = updates.filter((u) => u.artifactUpdate).map((u) => u.artifactUpdate);
    expect(chunks.at(-1).lastChunk).toBe(true);
    const streamed = [...(task.artifacts?.[0]?.parts ?? []), ...chunks.flatMap((c) => c.artifact.parts)];
    const stored = await getTask(agent, task.id);
    expect(artifactText({ parts: streamed })).toBe(artifactText(stored.artifacts[0]));
    expect(stored.artifacts[0].parts).toHaveLength(4);
  });

  it('a reconnect to SubscribeToTask with Last-Event-ID replays exactly what was missed', async () => {
    const task = await startTask(agent, slowExport(6));
    const reference = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    const first = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    const seen = [await first.next(), await first.next(), await first.next()] as SseEvent[];
    first.close();
    const lastId = seen.at(-1)?.id as string;

    const resumed = await rpcStream(
      agent,
      'SubscribeToTask',
      { id: task.id },
      { ...V1, lastEventId: lastId },
    );
    const replayed = await resumed.rest();
    const all = await reference.rest();
    expect(ids(replayed)[0]).toBe(Number(lastId) + 1);
    expect(replayed.map((e) => [e.id, e.data])).toEqual(
      all.filter((e) => Number(e.id) > Number(lastId)).map((e) => [e.id, e.data]),
    );
    expect(result(replayed.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    // No task snapshot on a resume: the client has it already.
    expect(replayed.some((e) => result(e).task)).toBe(false);
  });

  it('a retried SendStreamingMessage (same messageId) with Last-Event-ID resumes the same task', async () => {
    const message = slowExport(6);
    const first = await rpcStream(agent, 'SendStreamingMessage', { message }, V1);
    const snapshot = await first.next();
    const taskId = result(snapshot).task.id;
    const reference = await rpcStream(agent, 'SubscribeToTask', { id: taskId }, V1);
    const next = await first.next();
    first.close();

    const retried = await rpcStream(
      agent,
      'SendStreamingMessage',
      { message },
      { ...V1, lastEventId: next?.id },
    );
    const replayed = await retried.rest();
    const all = await reference.rest();
    // Every event after the one the client saw, each once, in order, to the end:
    const ids = replayed.map((e) => Number(e.id));
    expect(ids[0]).toBe(Number(next?.id) + 1);
    expect(ids).toEqual(ids.map((_, i) => (ids[0] ?? 0) + i));
    expect(result(replayed.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    // and the same events a live subscriber saw after its own snapshot.
    const since = Math.max(Number(all[0]?.id), Number(next?.id));
    const following = (events: SseEvent[]) =>
      events.filter((e) => Number(e.id) > since).map((e) => [e.id, e.data.result]);
    expect(following(replayed)).toEqual(following(all.slice(1)));
    const { body } = await agent.rpc('ListTasks', { pageSize: 100 }, V1);
    const sameMessage = body.result.tasks.filter(
      (t: { history?: { messageId: string }[] }) => t.history?.[0]?.messageId === message.messageId,
    );
    expect(sameMessage.map((t: { id: string }) => t.id)).toEqual([taskId]);
  });

  it('SubscribeToTask on a finished task: -32004 without Last-Event-ID, a replay with it', async () => {
    const { body } = await agent.rpc(
      'SendMessage',
      { message: skillMessage('export', { rows: 2, chunkRows: 1 }) },
      V1,
    );
    const task = body.result.task;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');

    // Refused before any stream opens: a plain JSON-RPC error, as for any other request.
    const refused = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    await refused.rest();
    expect(JSON.parse(refused.raw()).error.code).toBe(-32004);

    const replay = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, { ...V1, lastEventId: '2' });
    const events = await replay.rest();
    expect(ids(events)[0]).toBe(3);
    expect(strictlyIncreasing(ids(events))).toBe(true);
    expect(result(events[0]).statusUpdate.status.state).toBe('TASK_STATE_WORKING');
    expect(result(events.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(events.filter((e) => result(e).artifactUpdate)).toHaveLength(2);

    // Resuming after the very last event: nothing is missing, the stream ends at once.
    const tail = await rpcStream(
      agent,
      'SubscribeToTask',
      { id: task.id },
      { ...V1, lastEventId: events.at(-1)?.id },
    );
    expect(await tail.rest()).toEqual([]);
  });

  it('a v1.0 streaming call that fails before it starts answers a plain JSON-RPC error', async () => {
    const stream = await rpcStream(
      agent,
      'SendStreamingMessage',
      { message: skillMessage('teleport', {}) },
      { ...V1, id: 'e1' },
    );
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await stream.rest()).toEqual([]);
    const body = JSON.parse(stream.raw());
    expect([body.id, body.error?.code]).toEqual(['e1', -32602]);
  });

  it('a v0.3 streaming call that fails before it starts answers one SSE error event', async () => {
    const stream = await rpcStream(agent, 'tasks/resubscribe', { id: 'no-such-task' }, { id: 'e2' });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await stream.rest();
    expect(events.map((e) => [e.data.id, e.data.error?.code])).toEqual([['e2', -32001]]);
  });

  // A v1.0 stream holds its answer back until its first event, to answer a refusal as plain JSON: a
  // resume of a quiet task has no event to send, so its SSE must open once the task is found.
  it('a v1.0 resume of a quiet task opens its stream at once and follows the task', async () => {
    // Waiting for its requester's decision, the task writes nothing.
    const task = await startTask(agent, skillMessage('approval', { action: 'Resume a quiet stream' }));
    await agent.waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
    const first = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    const lastEventId = (await first.next())?.id;
    first.close();
    const resumed = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, { ...V1, lastEventId });
    expect(resumed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await agent.rpc('CancelTask', { id: task.id }, V1);
    const events = await resumed.rest();
    expect(result(events.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
    const unknown = await rpcStream(agent, 'SubscribeToTask', { id: 'no-such-task' }, { ...V1, lastEventId });
    expect(unknown.headers.get('content-type')).toMatch(/^application\/json/);
    await unknown.rest();
    expect(JSON.parse(unknown.raw()).error.code).toBe(-32001);
  });

  it('SubscribeToTask on an unknown task answers TaskNotFound', async () => {
    const stream = await rpcStream(agent, 'SubscribeToTask', { id: 'no-such-task' }, V1);
    await stream.rest();
    expect(JSON.parse(stream.raw()).error.code).toBe(-32001);
  });

  it('a stream ends with CANCELED when its task is canceled', async () => {
    const task = await startTask(agent, skillMessage('sleep', { seconds: 30 }));
    await agent.waitForState(task.id, 'TASK_STATE_WORKING');
    const stream = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    expect(result(await stream.next()).task.id).toBe(task.id);
    await agent.rpc('CancelTask', { id: task.id }, V1);
    const rest = await stream.rest();
    expect(result(rest.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('sends keep-alive comments on idle JSON-RPC and REST streams', async () => {
    const task = await startTask(agent, skillMessage('sleep', { seconds: 30 }));
    const rpc = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    const rest = await openSse(`${agent.url}/rest/tasks/${task.id}:subscribe`, {
      method: 'POST',
      headers: { 'A2A-Version': '1.0', ...agent.credentials },
    });
    expect(rest.status).toBe(200);
    for (const s of [rpc, rest]) {
      await waitForComments(s, 2);
      expect(
        s
          .raw()
          .split('\n')
          .filter((l) => l.startsWith(':')).length,
      ).toBeGreaterThanOrEqual(2);
      s.close();
    }
    await agent.rpc('CancelTask', { id: task.id }, V1);
  });

  it('REST subscribe resumes with Last-Event-ID too', async () => {
    const task = await startTask(agent, slowExport(4));
    const url = `${agent.url}/rest/tasks/${task.id}:subscribe`;
    const headers = { 'A2A-Version': '1.0', ...agent.credentials };
    const reference = await openSse(url, { method: 'POST', headers });
    const first = await openSse(url, { method: 'POST', headers });
    const seen = [await first.next(), await first.next()];
    first.close();
    const lastId = seen[1]?.id as string;
    const resumed = await openSse(url, { method: 'POST', headers: { ...headers, 'Last-Event-ID': lastId } });
    const replayed = await resumed.rest();
    const all = await reference.rest();
    expect(replayed.map((e) => [e.id, e.data])).toEqual(
      all.filter((e) => Number(e.id) > Number(lastId)).map((e) => [e.id, e.data]),
    );
    expect(replayed.at(-1)?.data.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('many concurrent streams each carry their whole task, in order', async () => {
    const streams = await Promise.all(
      Array.from({ length: 20 }, () =>
        rpcStream(
          agent,
          'SendStreamingMessage',
          { message: skillMessage('export', { rows: 6, chunkRows: 2, delayMs: 20 }) },
          V1,
        ),
      ),
    );
    const all = await Promise.all(streams.map((s) => s.rest(30_000)));
    expect(new Set(all.map((events) => result(events[0]).task.id)).size).toBe(20);
    for (const events of all) {
      expect(strictlyIncreasing(ids(events))).toBe(true);
      const taskId = result(events[0]).task.id;
      const updates = events.slice(1).map(result);
      expect(updates.every((u) => (u.statusUpdate ?? u.artifactUpdate).taskId === taskId)).toBe(true);
      expect(updates.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
      const chunks =
        updates.filter((u) => u.artifactUpdate).length +
        (result(events[0]).task.artifacts?.[0]?.parts.length ?? 0);
      expect(chunks).toBe(3);
    }
  });

  it('SubscribeToTask served from the engine writes what the SDK transport writes for the same task', async () => {
    // A call naming a tenant takes the SDK's transport and our request handler; a plain one is
    // served straight from the engine's stream (stream-subscriber.ts). Both must say the same.
    const task = await startTask(agent, slowExport(6));
    const direct = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, { ...V1, id: 'direct-7' });
    const viaSdk = await rpcStream(
      agent,
      'SubscribeToTask',
      { id: task.id, tenant: 't1' },
      { ...V1, id: 'direct-7' },
    );
    const [a, b] = await Promise.all([direct.rest(), viaSdk.rest()]);
    expect(result(a[0]).task.id).toBe(task.id);
    expect(result(a.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(a.every((e) => e.data.jsonrpc === '2.0' && e.data.id === 'direct-7')).toBe(true);
    // The two snapshots may be taken at different points of the log; from the later one on, the same.
    const from = Math.max(Number(a[0]?.id), Number(b[0]?.id));
    const tail = (events: SseEvent[]) => events.filter((e) => Number(e.id) > from).map((e) => [e.id, e.data]);
    expect(tail(a)).toEqual(tail(b));
    expect(tail(a).length).toBeGreaterThan(0);
  });

  it('every SSE event carries its id in the handle metadata too, and resuming with it replays what followed', async () => {
    // The SDK's SSE parser hands on `data:` only: the id a client resumes with must be in the event.
    const v03 = () => ({
      kind: 'message',
      messageId: crypto.randomUUID(),
      role: 'user',
      parts: [{ kind: 'data', data: { skill: 'export', input: { rows: 3, chunkRows: 1, delayMs: 60 } } }],
    });
    const restHeaders = { 'Content-Type': 'application/json', ...agent.credentials };
    const streams: [string, () => Promise<SseStream>, (e: SseEvent) => unknown][] = [
      [
        'JSON-RPC v1.0 send',
        () => rpcStream(agent, 'SendStreamingMessage', { message: slowExport(3) }, V1),
        result,
      ],
      ['JSON-RPC v0.3 send', () => rpcStream(agent, 'message/stream', { message: v03() }), result],
      [
        'REST v1.0 send',
        () =>
          openSse(`${agent.url}/rest/message:stream`, {
            method: 'POST',
            headers: { ...restHeaders, 'A2A-Version': '1.0' },
            body: JSON.stringify({ message: slowExport(3) }),
          }),
        (e) => e.data,
      ],
      [
        'REST v0.3 send',
        () =>
          openSse(`${agent.url}/rest/v1/message:stream`, {
            method: 'POST',
            headers: restHeaders,
            body: JSON.stringify({
              message: {
                messageId: crypto.randomUUID(),
                role: 'ROLE_USER',
                content: [{ text: 'export' }],
                metadata: { skill: 'export', input: { rows: 3, chunkRows: 1, delayMs: 60 } },
              },
            }),
          }),
        (e) => e.data,
      ],
    ];
    for (const [name, open, payload] of streams) {
      const events = await (await open()).rest();
      expect(events.length, name).toBeGreaterThan(2);
      for (const e of events) {
        // v1.0 wraps each event ({task}, {statusUpdate}...), v0.3 JSON-RPC has it bare (kind-tagged).
        const body = payload(e) as Record<string, { metadata?: Record<string, { eventId?: string }> }>;
        const value = (body.kind ? body : Object.values(body)[0]) as {
          metadata?: Record<string, { eventId?: string }>;
        };
        expect(value.metadata?.[HANDLE]?.eventId, `${name}: ${JSON.stringify(body).slice(0, 200)}`).toBe(
          e.id,
        );
      }
    }

    // Resume with the id read from the metadata alone: exactly what followed it.
    const task = await startTask(agent, slowExport(5));
    const reference = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    const first = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, V1);
    await first.next();
    const second = result(await first.next());
    first.close();
    const eventId = (second.statusUpdate ?? second.artifactUpdate).metadata[HANDLE].eventId;
    const resumed = await rpcStream(
      agent,
      'SubscribeToTask',
      { id: task.id },
      { ...V1, lastEventId: eventId },
    );
    const replayed = await resumed.rest();
    const all = await reference.rest();
    expect(replayed.map((e) => e.data)).toEqual(
      all.filter((e) => Number(e.id) > Number(eventId)).map((e) => e.data),
    );
    expect(result(replayed.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    const rest = await openSse(`${agent.url}/rest/tasks/${task.id}:subscribe`, {
      method: 'POST',
      headers: { 'A2A-Version': '1.0', 'Last-Event-ID': eventId, ...agent.credentials },
    });
    expect((await rest.rest()).map((e) => e.data.statusUpdate ?? e.data.artifactUpdate)).toEqual(
      replayed.map((e) => {
        const r = result(e);
        return r.statusUpdate ?? r.artifactUpdate;
      }),
    );
  });

  it('SubscribeToTask with a numeric request id keeps it as a number in every event', async () => {
    const task = await startTask(agent, skillMessage('sleep', { seconds: 60 }));
    const stream = await rpcStream(agent, 'SubscribeToTask', { id: task.id }, { ...V1, id: 42 });
    const first = await stream.next();
    await agent.rpc('CancelTask', { id: task.id }, V1);
    const events = [first as SseEvent, ...(await stream.rest())];
    expect(result(events.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
    expect(events.every((e) => e.data.id === 42)).toBe(true);
  });

  it('a client that goes away leaves the task running; the server keeps serving', async () => {
    const message = slowExport(5);
    const stream = await rpcStream(agent, 'SendStreamingMessage', { message }, V1);
    const taskId = result(await stream.next()).task.id;
    stream.close();
    const health = await fetch(`${agent.url}/healthz`);
    expect(await health.json()).toEqual({ status: 'ok' });
    const done = await agent.waitForState(taskId, 'TASK_STATE_COMPLETED');
    expect(done.artifacts[0].parts).toHaveLength(5);
    const errors = agent.logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
    expect(errors).toEqual([]);
  });
});
