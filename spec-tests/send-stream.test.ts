import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, rpcStream, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { openSse, type SseStream } from './sse.js';

/**
 * v1.0 SendStreamingMessage over JSON-RPC and REST (`POST /message:stream`), served from the
 * engine's subscription (jsonrpc-send-stream.ts, rest-send-stream.ts). A tenant still takes the
 * SDK's transports over our request handler: both must write the same bytes (the ids and times of
 * their own tasks aside) — events, event ids, envelopes, the end, refusals with their statuses.
 */

type Face = 'jsonrpc' | 'rest';
/** direct: the subscriber's path; sdk: the SDK's transport (a tenant takes it). */
type Path = 'direct' | 'sdk';

/** A streaming send on `face` by `path`, as `agent`'s caller. */
function sendStream(
  agent: Agent,
  face: Face,
  path: Path,
  params: Record<string, unknown>,
): Promise<SseStream> {
  if (face === 'jsonrpc')
    return rpcStream(
      agent,
      'SendStreamingMessage',
      path === 'sdk' ? { ...params, tenant: 't1' } : params,
      V1,
    );
  return openSse(`${agent.url}/rest${path === 'sdk' ? '/t1' : ''}/message:stream`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...agent.credentials },
    body: JSON.stringify(params),
  });
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;

/** A response's bytes with its own ids (in order of appearance) and times made neutral. */
function neutral(text: string): string {
  const seen = new Map<string, string>();
  return text
    .replace(UUID, (id) => {
      if (!seen.has(id)) seen.set(id, `<id${seen.size}>`);
      return seen.get(id) as string;
    })
    .replace(TIME, '<time>');
}

/** What a response said: status, headers (no date) and its whole body, made neutral. */
async function said(s: SseStream): Promise<{ status: number; headers: [string, string][]; body: string }> {
  await s.rest().catch(() => undefined);
  const headers = [...s.headers].filter(([k]) => k !== 'date' && k !== 'keep-alive');
  return { status: s.status, headers, body: neutral(s.raw()) };
}

const FACES: Face[] = ['jsonrpc', 'rest'];

/** Cancels the caller's queued tasks: their streams end. */
async function cancelQueued(agent: Agent): Promise<void> {
  const { body } = await agent.rpc('ListTasks', { pageSize: 100, status: 'TASK_STATE_SUBMITTED' }, V1);
  for (const t of body.result.tasks ?? []) await agent.rpc('CancelTask', { id: t.id }, V1);
}

describe('SendStreamingMessage (v1.0), direct and by the SDK path alike', () => {
  let agent: Agent;
  let blocker: string;
  beforeAll(async () => {
    // One runner slot, held by a long job: new tasks stay queued until the test moves them.
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'acme', carol: 'acme' },
      env: { RUNNER_CONCURRENCY: '1', MAX_STREAMS: '2', SSE_KEEPALIVE_MS: '60000' },
    });
    blocker = (await startTask(agent.as('carol'), skillMessage('sleep', { seconds: 600 }))).id;
    await agent.as('carol').waitForState(blocker, 'TASK_STATE_WORKING');
  });
  afterAll(async () => {
    await agent?.stop();
  });

  for (const face of FACES) {
    it(`${face}: a queued task's snapshot, then its events until it ends, byte for byte`, async () => {
      // One after the other: each task is alone in the queue (its snapshot says where it stands).
      const stream = async (path: Path) => {
        const s = await sendStream(agent, face, path, { message: skillMessage('sleep', { seconds: 1 }) });
        const first = await s.next();
        const task = face === 'jsonrpc' ? first?.data.result.task : first?.data.task;
        expect(task.status.state).toBe('TASK_STATE_SUBMITTED');
        await agent.rpc('CancelTask', { id: task.id }, V1);
        return said(s);
      };
      const direct = await stream('direct');
      const sdk = await stream('sdk');
      expect(direct?.status).toBe(200);
      expect(direct?.body).toMatch(/TASK_STATE_CANCELED/);
      expect(direct).toEqual(sdk);
    });

    it(`${face}: a send whose task has ended already streams its snapshot and ends (not refused)`, async () => {
      const message = skillMessage('sleep', { seconds: 0 });
      const { body } = await agent.rpc(
        'SendMessage',
        { message, configuration: { returnImmediately: true } },
        V1,
      );
      await agent.rpc('CancelTask', { id: body.result.task.id }, V1);
      // The same messageId again: the first task, as it stands (canceled), not a new one.
      const direct = await said(await sendStream(agent, face, 'direct', { message }));
      const sdk = await said(await sendStream(agent, face, 'sdk', { message }));
      expect(direct.status).toBe(200);
      expect(direct.body).toMatch(/^id: \d+\ndata: .*TASK_STATE_CANCELED.*\n\n$/s);
      expect(direct).toEqual(sdk);
    });

    it(`${face}: a message refused before the stream opens is the plain error the SDK path answers`, async () => {
      const refused = [
        { message: skillMessage('no-such-skill', {}) },
        { message: { ...skillMessage('sleep', { seconds: 1 }), taskId: 'no-such-task' } },
        { message: skillMessage('sleep', { seconds: 'many' }) },
        { message: { ...skillMessage('sleep', {}), messageId: '' } },
      ];
      for (const params of refused) {
        const direct = await said(await sendStream(agent, face, 'direct', params));
        const sdk = await said(await sendStream(agent, face, 'sdk', params));
        expect(direct.headers.find(([k]) => k === 'content-type')?.[1]).not.toMatch(/event-stream/);
        expect(direct).toEqual(sdk);
      }
    });

    it(`${face}: past MAX_STREAMS refused as the SDK path says it, creating nothing; every end gives the slot back`, async () => {
      const count = async () =>
        (await agent.as('bob').rpc('ListTasks', { pageSize: 100 }, V1)).body.result.tasks?.length ?? 0;
      const bob = agent.as('bob');
      const queued = () => ({ message: skillMessage('sleep', { seconds: 1 }) });
      const held = [
        await sendStream(bob, face, 'direct', queued()),
        await sendStream(bob, face, 'direct', queued()),
      ];
      for (const s of held) expect(await s.next()).toBeDefined();
      const before = await count();
      const direct = await said(await sendStream(bob, face, 'direct', queued()));
      const sdk = await said(await sendStream(bob, face, 'sdk', queued()));
      expect(direct.body).toMatch(/MAX_STREAMS/);
      expect(direct).toEqual(sdk);
      expect(await count()).toBe(before);
      // One client leaves, the other's task ends: both slots come back, and only once each.
      held[0]?.close();
      await cancelQueued(bob);
      await held[1]?.rest();
      const again = await eventually(async () => {
        const s = await sendStream(bob, face, 'direct', queued());
        if (s.headers.get('content-type')?.startsWith('text/event-stream')) return s;
        await s.rest().catch(() => undefined);
        return undefined;
      });
      const second = await sendStream(bob, face, 'direct', queued());
      expect(second.headers.get('content-type')).toMatch(/event-stream/);
      const third = await said(await sendStream(bob, face, 'direct', queued()));
      expect(third.body).toMatch(/MAX_STREAMS/);
      again.close();
      second.close();
      await cancelQueued(bob);
    });
  }

  it("an approver's streaming answer is the receipt alone, one event without an id, on both faces", async () => {
    await agent.as('carol').rpc('CancelTask', { id: blocker }, V1);
    const waiting = async () => {
      const task = await startTask(
        agent.as('alice'),
        skillMessage('approval', { action: 'ship', approver: 'acme/bob' }),
      );
      await agent.as('alice').waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
      return task.id as string;
    };
    for (const face of FACES) {
      const answer = (taskId: string) => ({
        message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId, parts: [{ text: 'approve' }] },
      });
      const direct = await said(await sendStream(agent.as('bob'), face, 'direct', answer(await waiting())));
      const sdk = await said(await sendStream(agent.as('bob'), face, 'sdk', answer(await waiting())));
      expect(direct.status).toBe(200);
      expect(direct.body).toMatch(/^data: [^\n]*\n\n$/);
      expect(direct).toEqual(sdk);
    }
  });
});

describe('SendStreamingMessage (v1.0): a direct reply', () => {
  it('is one event without an id, then the end, as the SDK path writes it', async () => {
    const agent = await launch({ conformance: true, env: { SSE_KEEPALIVE_MS: '60000' } });
    try {
      const reply = () => ({
        message: {
          messageId: `tck-message-response-${crypto.randomUUID()}`,
          role: 'ROLE_USER',
          parts: [{ text: 'hi' }],
        },
      });
      for (const face of FACES) {
        const direct = await said(await sendStream(agent, face, 'direct', reply()));
        const sdk = await said(await sendStream(agent, face, 'sdk', reply()));
        expect(direct.body).toMatch(/^data: [^\n]*Direct message response[^\n]*\n\n$/);
        expect(direct).toEqual(sdk);
      }
    } finally {
      await agent.stop();
    }
  });
});

describe('SendStreamingMessage (v1.0) at shutdown', () => {
  it('an open stream ends when the server stops, on both faces', async () => {
    // Its running job is not waited for long: the streams' end is what is looked at.
    const agent = await launch({ env: { SSE_KEEPALIVE_MS: '60000', SHUTDOWN_TIMEOUT_MS: '500' } });
    try {
      const streams = await Promise.all(
        FACES.map((face) =>
          sendStream(agent, face, 'direct', { message: skillMessage('sleep', { seconds: 600 }) }),
        ),
      );
      for (const s of streams) expect(await s.next()).toBeDefined();
      const stopped = agent.stop();
      for (const s of streams) await s.rest();
      expect(await stopped).toBe(0);
    } finally {
      await agent.stop();
    }
  });
});
