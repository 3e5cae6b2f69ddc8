import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './a2a.js';
import { type Agent, launch, tempDbPath } from './harness.js';
import { modern } from './mcp-modern.js';

/**
 * The life of a held 2025-11-25 stream (tasks/result, a resumed GET /mcp): refused before it
 * opens, the client leaving mid-stream, the server stopping mid-stream and the resume after it.
 */
const APPROVAL = { name: 'approval', arguments: { action: 'Deploy v2' }, task: {} };

/** A task made by the SDK client as a peer makes one (it waits for an answer: nothing runs meanwhile). */
async function waitingTask(agent: Agent, key: string): Promise<string> {
  const client = new Client({ name: 'mcp-streams-test', version: '1.0.0' }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  try {
    const { task } = await client.request({ method: 'tools/call', params: APPROVAL }, CreateTaskResultSchema);
    await eventually(async () => {
      const now = await client.experimental.tasks.getTask(task.taskId);
      return now.status === 'input_required' ? now : undefined;
    });
    return task.taskId;
  } finally {
    await client.close();
  }
}

/**
 * A held stream read raw: its first event is a resume point with an id and no data, which an
 * event-source reader would drop (as the SDK's does) but a test reads.
 */
interface Held {
  res: Response;
  /** The events received until `done` holds of them (or the stream ends). */
  until(done: (events: Event[]) => boolean): Promise<Event[]>;
  /** Every event until the server ends the stream. */
  rest(): Promise<Event[]>;
  /** Drops the connection, as a client that goes away. */
  close(): void;
}
// biome-ignore lint/suspicious/noExplicitAny: events are inspected freely in tests
type Event = { id?: string; data?: any };

async function held(url: string, init: RequestInit): Promise<Held> {
  const gone = new AbortController();
  const res = await fetch(url, { ...init, signal: gone.signal });
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  const events = (): Event[] =>
    text
      .split('\n\n')
      .slice(0, -1)
      .filter((block) => !block.startsWith(':'))
      .map((block) => {
        const id = /^id: (.*)$/m.exec(block)?.[1];
        const data = /^data: ?(.*)$/m.exec(block)?.[1];
        return { ...(id === undefined ? {} : { id }), ...(data ? { data: JSON.parse(data) } : {}) };
      });
  const until = async (done: (e: Event[]) => boolean) => {
    while (!ended && !done(events())) {
      reader ??= (res.body as ReadableStream<Uint8Array>).getReader();
      const chunk = await reader.read();
      if (chunk.done) ended = true;
      else text += decoder.decode(chunk.value, { stream: true });
    }
    return events();
  };
  return { res, until, rest: () => until(() => false), close: () => gone.abort() };
}

const SSE = 'application/json, text/event-stream';
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** `tasks/result` held open as a stream (or refused as JSON). */
const taskResult = (agent: Agent, key: string, taskId: string, id = 7): Promise<Held> =>
  held(`${agent.url}/mcp`, {
    method: 'POST',
    headers: { ...bearer(key), 'Content-Type': 'application/json', Accept: SSE },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId } }),
  });

/** `GET /mcp` with Last-Event-ID: a lost stream resumed. */
const resume = (agent: Agent, key: string, lastEventId: string): Promise<Held> =>
  held(`${agent.url}/mcp`, {
    headers: { ...bearer(key), Accept: 'text/event-stream', 'Last-Event-ID': lastEventId },
  });

const isSse = (s: Held) => s.res.headers.get('content-type')?.startsWith('text/event-stream') === true;

/** The JSON-RPC error of a stream refused before it opened. */
async function refusal(s: Held): Promise<{ code: number; message: string }> {
  expect(s.res.headers.get('content-type')).toMatch(/^application\/json/);
  return ((await s.res.json()) as { error: { code: number; message: string } }).error;
}

/** Until a status notification shows `status`. */
const statusShown = (status: string) => (events: Event[]) =>
  events.some((e) => e.data?.method === 'notifications/tasks/status' && e.data.params.status === status);

describe('MCP held streams: refusals and the client leaving (MAX_STREAMS 1)', () => {
  let agent: Agent;
  let alice: string;
  let bob: string;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'globex' }, env: { MAX_STREAMS: '1' } });
    alice = agent.keys.alice as string;
    bob = agent.keys.bob as string;
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('a task that is not the caller’s is refused as JSON before any stream, and takes no slot', async () => {
    const bobs = await waitingTask(agent, bob);
    const refused = await taskResult(agent, alice, bobs);
    expect(await refusal(refused)).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/not found/),
    });
    const unknown = await taskResult(agent, alice, 'no-such-task');
    expect((await refusal(unknown)).code).toBe(-32602);
    // With one stream allowed, alice still opens one of her own.
    const own = await taskResult(agent, alice, await waitingTask(agent, alice));
    expect(isSse(own)).toBe(true);
    const opened = await own.until(statusShown('input_required'));
    // Its first event: where to resume from, before anything else.
    expect(opened[0]).toEqual({ id: expect.stringMatching(/\.\d+$/) });
    own.close();
  });

  it('past MAX_STREAMS a stream and a resume are refused -32600; one whose client leaves mid-stream gives its slot back', async () => {
    const taskId = await waitingTask(agent, alice);
    const first = await eventually(async () => {
      const s = await taskResult(agent, alice, taskId);
      if (isSse(s)) return s;
      await s.res.text();
      return undefined;
    });
    const status = (await first.until(statusShown('input_required'))).at(-1);
    expect(status?.data.params).toMatchObject({ taskId, status: 'input_required' });
    const second = await taskResult(agent, alice, taskId, 8);
    expect(await refusal(second)).toMatchObject({
      code: -32600,
      message: expect.stringContaining('MAX_STREAMS'),
    });
    const resumed = await resume(agent, alice, status?.id as string);
    // Not 404: the task is there, the caller has a stream too many.
    expect(resumed.res.status).toBe(429);
    expect(resumed.res.headers.get('retry-after')).toBe('5');
    expect(await refusal(resumed)).toMatchObject({
      code: -32600,
      message: expect.stringContaining('MAX_STREAMS'),
    });
    // Bob's streams are his own.
    const bobs = await taskResult(agent, bob, await waitingTask(agent, bob));
    expect(isSse(bobs)).toBe(true);
    bobs.close();

    first.close();
    const again = await eventually(async () => {
      const s = await resume(agent, alice, status?.id as string);
      if (isSse(s)) return s;
      expect((await refusal(s)).code).toBe(-32600);
      return undefined;
    });
    again.close();
  });

  it('a Last-Event-ID that is not one of ours is 400 before any stream, saying so', async () => {
    for (const id of ['garbage', 'e30.12', `${Buffer.from('{"id":1}').toString('base64url')}.3`]) {
      const s = await resume(agent, alice, id);
      expect(s.res.status).toBe(400);
      expect((await refusal(s)).message).toBe('Last-Event-ID is not an event id of this server');
    }
  });
});

describe('MCP held streams at shutdown', () => {
  const agents: Agent[] = [];
  afterAll(async () => {
    await Promise.all(agents.map((a) => a.stop()));
  });

  it('a tasks/result stream just ends, without an answer; after the restart its last event id resumes it, to the answer', async () => {
    const dbPath = tempDbPath();
    const first = await launch({ dbPath, apiKeys: { alice: 'acme' } });
    agents.push(first);
    const key = first.keys.alice as string;
    const taskId = await waitingTask(first, key);
    const stream = await taskResult(first, key, taskId, 41);
    expect(isSse(stream)).toBe(true);
    await stream.until(statusShown('input_required'));
    const [rest] = await Promise.all([stream.rest(), first.stop()]);
    agents.splice(0);
    // Nothing answers request 41: the stream ended as a lost one does.
    expect(rest.filter((e) => e.data?.id === 41)).toEqual([]);
    const last = rest.at(-1);
    if (!last) throw new Error('the stream showed nothing before the restart');
    const lastId = last.id as string;
    expect(lastId).toMatch(/\.\d+$/);
    // The question the stream showed, answered after the restart.
    const { key: asked } = last.data.params._meta['taskhandle/input'] as { key: string };

    const second = await launch({
      dbPath,
      apiKeysFile: { file: String(first.keysFile), keys: first.keys },
    });
    agents.push(second);
    const resumed = await resume(second, key, lastId);
    expect(isSse(resumed)).toBe(true);
    const answered = await modern(
      second,
      'tasks/update',
      { taskId, inputResponses: { [asked]: { action: 'accept', content: { decision: 'approve' } } } },
      { key },
    );
    expect(answered.body.result.resultType).toBe('complete');
    const events = await resumed.rest();
    expect(events.at(-1)?.data).toMatchObject({
      jsonrpc: '2.0',
      id: 41,
      result: { isError: false, content: [{ type: 'text', text: 'Approved by acme/alice' }] },
    });
    expect(events.at(-1)?.id).toMatch(/\.end$/);
  });
});
