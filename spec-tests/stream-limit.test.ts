import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, rpcStream, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { openSse, type SseStream } from './sse.js';

/**
 * MAX_STREAMS: one principal's open task streams are bounded on every face that streams; one more
 * is refused in that face's shape before anything is read, another principal is not held back, and
 * a closed stream gives its slot back.
 */
describe('open streams per principal (MAX_STREAMS)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'globex', carol: 'initech' },
      env: { MAX_STREAMS: '2', OPERATORS: 'acme/alice' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const sleeping = (as: string) => startTask(agent.as(as), skillMessage('sleep', { seconds: 30 }));
  const subscribe = (as: string, id: string) => rpcStream(agent.as(as), 'SubscribeToTask', { id }, V1);

  it('a third stream is refused on every face; another principal still streams; a closed one frees its slot', async () => {
    const task = await sleeping('alice');
    const open: SseStream[] = [await subscribe('alice', task.id), await subscribe('alice', task.id)];
    for (const s of open) expect((await s.next())?.data.result.task.id).toBe(task.id);

    const rpc = await subscribe('alice', task.id);
    expect(rpc.headers.get('content-type')).toMatch(/^application\/json/);
    await rpc.rest();
    const refused = JSON.parse(rpc.raw());
    expect(refused.error.code).toBe(-32054);
    expect(refused.error.message).toMatch(/You have 2 streams open, the most allowed \(MAX_STREAMS\)/);

    const rest = await fetch(`${agent.url}/rest/tasks/${task.id}:subscribe`, {
      headers: { ...agent.as('alice').credentials, 'A2A-Version': '1.0' },
    });
    expect(rest.status, await rest.clone().text()).toBe(429);
    const restError = ((await rest.json()) as { error: { message: string; status: string } }).error;
    expect(restError.message).toMatch(/MAX_STREAMS/);
    expect(restError.status).toBe('RESOURCE_EXHAUSTED');

    const jobs = await fetch(`${agent.url}/v1/jobs/${task.id}/events`, {
      headers: agent.as('alice').credentials,
    });
    expect(jobs.status).toBe(429);
    // When a stream closes is unknown: look again after the slot refusals' 5 s (REST's too).
    expect(jobs.headers.get('retry-after')).toBe('5');
    expect(rest.headers.get('retry-after')).toBe('5');
    expect(((await jobs.json()) as { detail: string }).detail).toMatch(/MAX_STREAMS/);

    // Bob's streams are his own.
    const bobs = await sleeping('bob');
    const bobStream = await subscribe('bob', bobs.id);
    expect((await bobStream.next())?.data.result.task.id).toBe(bobs.id);
    bobStream.close();

    open[0]?.close();
    const again = await eventually(async () => {
      const s = await subscribe('alice', task.id);
      if (s.headers.get('content-type')?.startsWith('text/event-stream')) return s;
      await s.rest();
      return undefined;
    });
    expect((await again.next())?.data.result.task.id).toBe(task.id);
    again.close();
    open[1]?.close();
  });

  it("the inbox's and the console's change streams count too: a third is a 429 problem, a closed one frees its slot", async () => {
    for (const [who, path] of [
      ['bob', '/inbox/api/events'],
      ['alice', '/console/api/events'],
    ] as const) {
      const open = () => openSse(`${agent.url}${path}`, { headers: agent.as(who).credentials });
      const held = [await open(), await open()];
      for (const s of held) expect(s.status, path).toBe(200);
      const refused = await fetch(`${agent.url}${path}`, { headers: agent.as(who).credentials });
      expect(refused.status, path).toBe(429);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await refused.json()) as { detail: string }).detail).toMatch(
        /You have 2 streams open.*MAX_STREAMS/,
      );
      held[0]?.close();
      const again = await eventually(async () => {
        const s = await open();
        if (s.status === 200) return s;
        s.close();
        return undefined;
      });
      again.close();
      held[1]?.close();
    }
  });

  it('a streaming send past the bound is refused before it creates anything; its slot comes back after a send that streams', async () => {
    const count = async () =>
      (await agent.as('bob').rpc('ListTasks', { pageSize: 100 }, V1)).body.result.tasks?.length ?? 0;
    const task = await sleeping('bob');
    const held: SseStream[] = [await subscribe('bob', task.id), await subscribe('bob', task.id)];
    for (const s of held) await s.next();
    const before = await count();
    const refused = await rpcStream(
      agent.as('bob'),
      'SendStreamingMessage',
      { message: skillMessage('sleep', { seconds: 30 }) },
      V1,
    );
    await refused.rest();
    expect(JSON.parse(refused.raw()).error.code).toBe(-32054);
    expect(await count()).toBe(before);
    for (const s of held) s.close();
    // A streaming send that ran to its end gives its slot back: two more streams still open.
    const sent = await eventually(async () => {
      const s = await rpcStream(
        agent.as('bob'),
        'SendStreamingMessage',
        { message: skillMessage('export', { rows: 1 }) },
        V1,
      );
      if (s.headers.get('content-type')?.startsWith('text/event-stream')) return s;
      await s.rest();
      return undefined;
    });
    await sent.rest();
    const again = [await subscribe('bob', task.id), await subscribe('bob', task.id)];
    for (const s of again) expect((await s.next())?.data.result.task.id).toBe(task.id);
    for (const s of again) s.close();
  });

  it('a stream of a task that does not exist takes no slot', async () => {
    // carol opens no stream before this: the tests above close their streams, and the server frees
    // their slots when it notices, which may be after this test starts.
    for (let i = 0; i < 5; i++) {
      const s = await openSse(`${agent.url}/v1/jobs/nope-${i}/events`, {
        headers: agent.as('carol').credentials,
      });
      expect(s.status).toBe(404);
    }
    const carols = await sleeping('carol');
    const ok = await fetch(`${agent.url}/v1/jobs/${carols.id}/events`, {
      headers: agent.as('carol').credentials,
    });
    expect(ok.status).toBe(200);
    await ok.body?.cancel();
  });
});
