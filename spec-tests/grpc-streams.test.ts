import { type SendMessageRequest, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { decodeErrorInfo, decodeStatus } from '@a2a-js/sdk/errors/grpc';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import {
  type ClientReadableStream,
  credentials,
  Metadata,
  makeGenericClientConstructor,
  type ServiceError,
} from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillRequest } from './a2a.js';
import { eventIdOf, GRPC, grpcInterface } from './grpc.js';
import { type Agent, launch } from './harness.js';

/** Sleeping tasks would hold a graceful stop for its whole default; release them sooner. */
const QUICK_STOP = { SHUTDOWN_TIMEOUT_MS: '200' };
/** The status a client that cancelled its call sees. */
const CANCELLED = 1;

interface RawClient {
  sendMessage(
    req: SendMessageRequest,
    md: Metadata,
    cb: (err: ServiceError | null, res: unknown) => void,
  ): void;
  subscribeToTask(req: { tenant: string; id: string }, md: Metadata): ClientReadableStream<StreamResponse>;
  sendStreamingMessage(req: SendMessageRequest, md: Metadata): ClientReadableStream<StreamResponse>;
  close(): void;
}

/** A plain grpc-js client: the stream's status, details and trailers as they come, and cancel() at will. */
async function rawClient(agent: Agent): Promise<RawClient> {
  const target = (await grpcInterface(agent))?.url as string;
  const Ctor = makeGenericClientConstructor(A2AService, 'A2AService');
  return new Ctor(target, credentials.createInsecure()) as unknown as RawClient;
}

const metadataOf = (headers: Record<string, string>) => {
  const md = new Metadata();
  for (const [k, v] of Object.entries(headers)) md.set(k.toLowerCase(), v);
  return md;
};

/** How a stream ended: its events, its status code and details, and the ErrorInfo reason if any. */
interface Ended {
  events: StreamResponse[];
  code: number;
  details: string;
  reason?: string;
}

function ending(stream: ClientReadableStream<StreamResponse>, onEvent?: (e: StreamResponse) => void) {
  const events: StreamResponse[] = [];
  return new Promise<Ended>((resolve) => {
    stream.on('data', (e: StreamResponse) => {
      events.push(e);
      onEvent?.(e);
    });
    stream.on('error', () => {});
    stream.on('status', (s: { code: number; details: string; metadata: Metadata }) => {
      const bin = s.metadata.get('grpc-status-details-bin')[0];
      const status = bin ? decodeStatus(bin as Buffer) : undefined;
      const info = status?.details[0] ? decodeErrorInfo(status.details[0].value as Buffer) : undefined;
      // 'status' can come before the last 'data' handlers ran: settle after them.
      setImmediate(() => resolve({ events, code: s.code, details: s.details, reason: info?.reason }));
    });
  });
}

const stateOf = (e: StreamResponse | undefined) => {
  const p = e?.payload;
  if (p?.$case === 'task') return p.value.status?.state;
  return p?.$case === 'statusUpdate' ? p.value.status?.state : undefined;
};

describe('gRPC SubscribeToTask (served from the engine subscription)', () => {
  let agent: Agent;
  let client: RawClient;
  const as = (who: string, extra: Record<string, string> = {}) =>
    metadataOf({ ...agent.as(who).credentials, ...extra });
  const send = (req: SendMessageRequest, who = 'alice') =>
    new Promise<Task>((resolve, reject) =>
      client.sendMessage(req, as(who), (err, res) =>
        err ? reject(err) : resolve((res as { payload: { value: Task } }).payload.value),
      ),
    );
  const subscribe = (id: string, who = 'alice', extra: Record<string, string> = {}) =>
    client.subscribeToTask({ tenant: '', id }, as(who, extra));

  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'globex' },
      env: { GRPC_PORT: '0', ...QUICK_STOP, MAX_STREAMS: '2', RUNNER_CONCURRENCY: '20' },
    });
    client = await rawClient(agent);
  });
  afterAll(async () => {
    client?.close();
    await agent?.stop();
  });

  it('an unknown task, and another owner’s, end NOT_FOUND (TASK_NOT_FOUND) with the same words', async () => {
    const running = await send(skillRequest('sleep', { seconds: 600 }, { returnImmediately: true }));
    const missing = crypto.randomUUID();
    const nobodys = await ending(subscribe(missing));
    expect(nobodys).toMatchObject({ events: [], code: GRPC.NOT_FOUND, reason: 'TASK_NOT_FOUND' });
    expect(nobodys.details).toContain(missing);
    const theirs = await ending(subscribe(running.id, 'bob'));
    expect(theirs).toMatchObject({ events: [], code: GRPC.NOT_FOUND, reason: 'TASK_NOT_FOUND' });
    expect(theirs.details.replaceAll(running.id, '<id>')).toBe(nobodys.details.replaceAll(missing, '<id>'));
    // A resume is refused the same way.
    const resumed = await ending(subscribe(running.id, 'bob', { 'last-event-id': '0' }));
    expect(resumed).toMatchObject({ events: [], code: GRPC.NOT_FOUND, details: theirs.details });
  });

  it('a finished task: FAILED_PRECONDITION (UNSUPPORTED_OPERATION) without last-event-id', async () => {
    const done = await send(skillRequest('export', { rows: 2 }));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const refused = await ending(subscribe(done.id));
    expect(refused).toMatchObject({
      events: [],
      code: GRPC.FAILED_PRECONDITION,
      reason: 'UNSUPPORTED_OPERATION',
    });
    expect(refused.details).toBe(`Task ${done.id} is completed; nothing to stream`);
  });

  it('no task id: INVALID_ARGUMENT, saying it is required', async () => {
    const refused = await ending(subscribe('  '));
    expect(refused).toMatchObject({ code: GRPC.INVALID_ARGUMENT, details: 'task id is required' });
  });

  it('a resume replays what followed last-event-id, in order, each with its id, and ends OK', async () => {
    const done = await send(skillRequest('export', { rows: 4, chunkRows: 1 }));
    const all = await ending(subscribe(done.id, 'alice', { 'last-event-id': '0' }));
    expect(all.code).toBe(0);
    const ids = all.events.map((e) => Number(eventIdOf(e)));
    expect(ids.length).toBeGreaterThan(3);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(stateOf(all.events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    const after = ids[1] as number;
    const rest = await ending(subscribe(done.id, 'alice', { 'last-event-id': String(after) }));
    expect(rest.code).toBe(0);
    expect(rest.events.map((e) => Number(eventIdOf(e)))).toEqual(ids.slice(2));
    // After the last event of a finished task there is nothing to wait for.
    const last = String(ids.at(-1));
    expect(await ending(subscribe(done.id, 'alice', { 'last-event-id': last }))).toMatchObject({
      events: [],
      code: 0,
    });
  });

  it('MAX_STREAMS: one more stream is RESOURCE_EXHAUSTED; a stream its client cancels gives its slot back', async () => {
    const task = await send(skillRequest('sleep', { seconds: 600 }, { returnImmediately: true }));
    await agent.waitForState(task.id, 'TASK_STATE_WORKING');
    const opened = (stream: ClientReadableStream<StreamResponse>) =>
      new Promise<StreamResponse>((resolve) => stream.once('data', resolve));
    const first = subscribe(task.id);
    const second = subscribe(task.id);
    const firstEnded = ending(first);
    const secondEnded = ending(second);
    expect(stateOf(await opened(first))).toBe(TaskState.TASK_STATE_WORKING);
    expect(stateOf(await opened(second))).toBe(TaskState.TASK_STATE_WORKING);
    const third = await ending(subscribe(task.id));
    expect(third).toMatchObject({ events: [], code: GRPC.RESOURCE_EXHAUSTED });
    expect(third.details).toMatch(/MAX_STREAMS/);
    first.cancel();
    expect((await firstEnded).code).toBe(CANCELLED);
    // The server hears the cancel when it hears it: try until the slot is back (a bounded wait).
    let fourth: ClientReadableStream<StreamResponse> | undefined;
    for (let i = 0; i < 50 && !fourth; i++) {
      const attempt = subscribe(task.id);
      const got = await Promise.race([opened(attempt), ending(attempt)]);
      if ('payload' in got) fourth = attempt;
    }
    expect(fourth).toBeDefined();
    fourth?.cancel();
    second.cancel();
    await secondEnded;
  });

  it('a client that stops reading holds its stream; once it reads again every event comes, in order', async () => {
    const task = await send(
      skillRequest('export', { rows: 1500, chunkRows: 1 }, { returnImmediately: true }),
    );
    const stream = subscribe(task.id);
    let paused = false;
    const ended = ending(stream, () => {
      if (paused) return;
      paused = true;
      stream.pause();
    });
    await agent.waitForState(task.id, 'TASK_STATE_COMPLETED', 60_000);
    stream.resume();
    const { events, code } = await ended;
    expect(code).toBe(0);
    const ids = events.map((e) => Number(eventIdOf(e)));
    // The snapshot, then every event after it without a gap, to the last.
    for (let i = 2; i < ids.length; i++) expect(ids[i]).toBe((ids[i - 1] as number) + 1);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
    // Far more than HTTP/2's window and the call's buffer hold: the server waited for 'drain'.
    const artifacts = events.filter((e) => e.payload?.$case === 'artifactUpdate');
    expect(artifacts.length).toBeGreaterThan(1000);
  });
});

describe('gRPC SendStreamingMessage (the send, then the engine subscription)', () => {
  let agent: Agent;
  let client: RawClient;
  const stream = (req: SendMessageRequest, who = 'alice') =>
    ending(client.sendStreamingMessage(req, metadataOf(agent.as(who).credentials)));
  const startSleep = () =>
    new Promise<Task>((resolve, reject) =>
      client.sendMessage(
        skillRequest('sleep', { seconds: 600 }, { returnImmediately: true }),
        metadataOf(agent.credentials),
        (err, res) => (err ? reject(err) : resolve((res as { payload: { value: Task } }).payload.value)),
      ),
    );
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'globex' },
      env: { GRPC_PORT: '0', ...QUICK_STOP, MAX_STREAMS: '1' },
    });
    client = await rawClient(agent);
  });
  afterAll(async () => {
    client?.close();
    await agent?.stop();
  });

  it('the new task first, then each event with its id, in order, to the end', async () => {
    const { events, code } = await stream(skillRequest('export', { rows: 3, chunkRows: 1 }));
    expect(code).toBe(0);
    expect(events[0]?.payload?.$case).toBe('task');
    const ids = events.map((e) => Number(eventIdOf(e)));
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBe((ids[i - 1] as number) + 1);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('an answer to another owner’s task: NOT_FOUND, as for a task that does not exist', async () => {
    const running = await startSleep();
    const theirs = await stream(skillRequest('sleep', { seconds: 1 }, {}, { taskId: running.id }), 'bob');
    expect(theirs).toMatchObject({ events: [], code: GRPC.NOT_FOUND, reason: 'TASK_NOT_FOUND' });
    const missing = crypto.randomUUID();
    const nobodys = await stream(skillRequest('sleep', { seconds: 1 }, {}, { taskId: missing }), 'bob');
    expect(theirs.details.replaceAll(running.id, '<id>')).toBe(nobodys.details.replaceAll(missing, '<id>'));
  });

  it('over MAX_STREAMS: RESOURCE_EXHAUSTED, and no task made for it', async () => {
    const task = await startSleep();
    const held = client.subscribeToTask({ tenant: '', id: task.id }, metadataOf(agent.credentials));
    const heldEnded = ending(held);
    await new Promise((resolve) => held.once('data', resolve));
    const contextId = crypto.randomUUID();
    const refused = await stream(skillRequest('sleep', { seconds: 1 }, {}, { contextId }));
    expect(refused).toMatchObject({ events: [], code: GRPC.RESOURCE_EXHAUSTED });
    expect(refused.details).toMatch(/MAX_STREAMS/);
    const { body } = await agent.rpc('ListTasks', { contextId }, { version: '1.0' });
    expect(body.result.tasks).toEqual([]);
    held.cancel();
    await heldEnded;
  });

  it('a request nesting deeper than MAX_JSON_DEPTH: INVALID_ARGUMENT', async () => {
    let deep: Record<string, unknown> = { x: 1 };
    for (let i = 0; i < 100; i++) deep = { a: deep };
    const refused = await stream(skillRequest('sleep', { seconds: 1 }, {}, { metadata: deep }));
    expect(refused).toMatchObject({ events: [], code: GRPC.INVALID_ARGUMENT });
    expect(refused.details).toMatch(/MAX_JSON_DEPTH/);
  });
});

describe('gRPC SubscribeToTask at shutdown', () => {
  it('ends UNAVAILABLE, naming the last event to resubscribe after', async () => {
    const agent = await launch({ apiKeys: { alice: 'acme' }, env: { GRPC_PORT: '0', ...QUICK_STOP } });
    const client = await rawClient(agent);
    try {
      const md = metadataOf(agent.credentials);
      const task = await new Promise<Task>((resolve, reject) =>
        client.sendMessage(
          skillRequest('sleep', { seconds: 600 }, { returnImmediately: true }),
          md,
          (err, res) => (err ? reject(err) : resolve((res as { payload: { value: Task } }).payload.value)),
        ),
      );
      await agent.waitForState(task.id, 'TASK_STATE_WORKING');
      const stream = client.subscribeToTask({ tenant: '', id: task.id }, metadataOf(agent.credentials));
      const first = new Promise<StreamResponse>((resolve) => stream.once('data', resolve));
      const ended = ending(stream);
      const seen = eventIdOf(await first);
      expect(seen).toMatch(/^\d+$/);
      void agent.stop();
      const cut = await ended;
      expect(cut.code).toBe(GRPC.UNAVAILABLE);
      // The stop may release the task first (an event the stream shows): the last one seen counts.
      const last = eventIdOf(cut.events.at(-1) as StreamResponse);
      expect(cut.details).toBe(
        `The server is shutting down; resubscribe with metadata last-event-id: ${last}`,
      );
    } finally {
      client.close();
      await agent.stop();
    }
  });
});
