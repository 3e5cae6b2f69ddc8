import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, send, skillMessage, startTask } from './a2a.js';
import { startCluster } from './cluster.js';
import { type Agent, launch } from './harness.js';
import { skipWithoutPostgres } from './postgres.js';
import { openSse } from './sse.js';
import { type Receiver, startReceiver } from './webhook-receiver.js';

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

const PUSH = {
  PUSH_ALLOW: '127.0.0.0/8',
  PUSH_RETRY_MS: '50',
  PUSH_RETRY_MAX_MS: '200',
  PUSH_TIMEOUT_MS: '500',
  PUSH_POLL_MS: '50',
};

describe('the operator console (HTTP): operators see and act on every principal’s tasks', () => {
  let agent: Agent;
  let hook: Receiver;
  /** What the receiver answers now: 410 dead-letters a notification at once. */
  let answer = 410;
  const consoleApi = (who: string | Record<string, string>, path: string, init: RequestInit = {}) =>
    fetch(`${agent.url}/console/api${path}`, {
      ...init,
      headers: { ...agent.as(who).credentials, ...init.headers },
    });
  const asRoot = async (path: string): Promise<Json> => {
    const res = await consoleApi('root', path);
    expect(res.status, `${path}: ${res.status}`).toBe(200);
    return (await res.json()) as Json;
  };
  const post = (who: string, path: string) =>
    consoleApi(who, path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  const sleeper = (who: string) => startTask(agent.as(who), skillMessage('sleep', { seconds: 600 }));

  beforeAll(async () => {
    hook = await startReceiver((req) => ({ status: req.index === 0 ? 410 : answer }));
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'acme', root: 'ops' },
      env: { ...PUSH, OPERATORS: 'ops/root, jwt:ops/nobody' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
    await hook?.close();
  });

  it('serves the page with a strict Content-Security-Policy, uPlot from this server, no inline script', async () => {
    const res = await fetch(`${agent.url}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<script type="module">|style="/);
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of [
      'console.js',
      'charts.js',
      'console.css',
      'uplot.js',
      'uplot.css',
      'eventsource-parser.js',
    ]) {
      const a = await fetch(`${agent.url}/console/${asset}`);
      expect(a.status, asset).toBe(200);
      expect(a.headers.get('content-type'), asset).toMatch(
        asset.endsWith('.css') ? /text\/css/ : /javascript/,
      );
    }
    expect(await (await fetch(`${agent.url}/console/uplot.js`)).text()).toContain('uPlot');
  });

  it('refuses callers without credentials (401) and principals that are not operators (403, saying what to do)', async () => {
    const none = await consoleApi({}, '/tasks');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBeTruthy();
    for (const path of ['/tasks', '/counts', '/activity', '/events', '/tasks/x']) {
      const res = await consoleApi('bob', path);
      expect(res.status, path).toBe(403);
      const body = (await res.json()) as Json;
      expect(body.detail).toContain('acme/bob is not one');
      expect(body.detail).toContain('OPERATORS');
    }
    expect((await post('bob', '/tasks/x/cancel')).status).toBe(403);
  });

  it("lists every principal's tasks (unlike the inbox), filters them and pages through them", async () => {
    const a1 = await sleeper('alice');
    const b1 = await sleeper('bob');
    const a2 = await startTask(
      agent.as('alice'),
      skillMessage('approval', { action: 'x', approver: 'acme/bob' }),
    );
    await agent.as('alice').waitForState(a2.id, 'TASK_STATE_INPUT_REQUIRED');
    await agent.as('alice').waitForState(a1.id, 'TASK_STATE_WORKING');

    const all = await asRoot('/tasks');
    const ids = all.tasks.map((t: Json) => t.id);
    expect(ids).toEqual(expect.arrayContaining([a1.id, b1.id, a2.id]));
    expect(all.tasks.find((t: Json) => t.id === b1.id)).toMatchObject({ owner: 'acme/bob', skill: 'sleep' });
    // Alice's own list (A2A) does not hold bob's task: the console does.
    const { body } = await agent.as('alice').rpc('ListTasks', {}, { version: '1.0' });
    expect(body.result.tasks.map((t: Json) => t.id)).not.toContain(b1.id);

    expect((await asRoot('/tasks?state=input-required')).tasks.map((t: Json) => t.id)).toEqual([a2.id]);
    expect((await asRoot('/tasks?owner=acme/bob')).tasks.map((t: Json) => t.id)).toEqual([b1.id]);
    expect((await asRoot('/tasks?skill=approval')).tasks.map((t: Json) => t.id)).toEqual([a2.id]);
    expect((await asRoot(`/tasks?id=${a1.id.slice(-12)}`)).tasks.map((t: Json) => t.id)).toEqual([a1.id]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await asRoot(`/tasks?createdAfter=${encodeURIComponent(future)}`)).tasks).toEqual([]);

    const paged: string[] = [];
    let token = '';
    for (let i = 0; i < 20; i++) {
      const page = await asRoot(`/tasks?pageSize=1${token ? `&pageToken=${token}` : ''}`);
      paged.push(...page.tasks.map((t: Json) => t.id));
      token = page.nextPageToken;
      if (!token) break;
    }
    expect(paged).toEqual(ids);

    const counts = (await asRoot('/counts')).counts;
    expect(counts['input-required']).toBeGreaterThanOrEqual(1);
    expect(counts.working).toBeGreaterThanOrEqual(2);
  });

  it('refuses a bad filter with 400 naming it', async () => {
    for (const [query, word] of [
      ['state=done', 'state'],
      ['pageSize=0', 'pageSize'],
      ['createdAfter=yesterday', 'createdAfter'],
      ['owner=just-a-name', 'owner'],
      ['colour=red', 'colour'],
      ['pageToken=%25%25', 'pageToken'],
    ]) {
      const res = await consoleApi('root', `/tasks?${query}`);
      expect(res.status, query).toBe(400);
      expect(((await res.json()) as Json).detail, query).toContain(word);
    }
  });

  it('shows one task: handle fields, owner, timeline; 404 for an unknown id', async () => {
    const task = await send(agent.as('bob'), skillMessage('export', { rows: 5, format: 'csv' }));
    await agent.as('bob').waitForState(task.task.id, 'TASK_STATE_COMPLETED');
    const page = await asRoot(`/tasks/${task.task.id}`);
    expect(page).toMatchObject({ id: task.task.id, owner: 'acme/bob', skill: 'export', state: 'completed' });
    const kinds = page.events.map((e: Json) => e.kind);
    expect(kinds).toContain('status');
    expect(kinds).toContain('artifact');
    expect(page.events.filter((e: Json) => e.kind === 'status').map((e: Json) => e.state)).toEqual(
      expect.arrayContaining(['submitted', 'working', 'completed']),
    );
    const artifact = page.events.find((e: Json) => e.kind === 'artifact');
    const download = await fetch(`${agent.url}${artifact.download}`, {
      headers: agent.as('root').credentials,
    });
    expect(download.status).toBe(200);
    expect(await download.text()).toContain('id,name');
    expect((await consoleApi('root', '/tasks/no-such-task')).status).toBe(404);
  });

  it('cancels any principal’s task, audited with the operator and the owner', async () => {
    const task = await sleeper('alice');
    await agent.as('alice').waitForState(task.id, 'TASK_STATE_WORKING');
    const wrongType = await consoleApi('root', `/tasks/${task.id}/cancel`, { method: 'POST', body: '{}' });
    expect(wrongType.status).toBe(415);
    expect(((await wrongType.json()) as Json).detail).toBe(
      'The request has Content-Type "text/plain;charset=UTF-8"; send its JSON body with Content-Type: application/json',
    );
    const untyped = await consoleApi('root', `/tasks/${task.id}/cancel`, { method: 'POST' });
    expect(untyped.status).toBe(415);
    expect(((await untyped.json()) as Json).detail).toContain('has no Content-Type');
    const res = await post('root', `/tasks/${task.id}/cancel`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).state).toBe('canceled');
    await agent.as('alice').waitForState(task.id, 'TASK_STATE_CANCELED');
    // The log line is read from the server's stdout: it may arrive just after the answer.
    const line = await eventually(async () =>
      agent.logs.find((l) => l.audit === 'cancel' && l.taskId === task.id),
    );
    expect(line).toMatchObject({
      principal: 'root',
      tenant: 'ops',
      grant: 'operator',
      operator: 'ops/root',
      owner: 'api-key:acme/alice',
    });
    expect((await post('root', `/tasks/${task.id}/cancel`)).status).toBe(409);
  });

  it('shows delivery attempts and dead letters; deliver again re-queues one and the receiver gets it', async () => {
    const task = await send(agent.as('alice'), skillMessage('export', { rows: 2, format: 'csv' }), {
      taskPushNotificationConfig: { url: hook.url('/hook') },
    });
    const id = task.task.id;
    await agent.as('alice').waitForState(id, 'TASK_STATE_COMPLETED');
    const dead = await eventually(async () => {
      const page = await asRoot(`/tasks/${id}`);
      return page.outbox.find((o: Json) => o.dead) ? page : undefined;
    });
    const letter = dead.outbox.find((o: Json) => o.dead);
    expect(letter.lastError).toContain('410');
    expect(dead.attempts[0]).toMatchObject({ status: 410, outcome: 'dead', attempt: 1 });
    expect(dead.webhooks[0].destination).toBe(hook.url('/hook'));

    answer = 200;
    const before = hook.received.length;
    const again = await post('root', `/tasks/${id}/deliveries/${letter.webhook}/${letter.seq}/redeliver`);
    expect(again.status).toBe(200);
    const [got] = (await hook.waitFor((r) => r.length > before && r.at(-1)?.status === 200)).slice(-1);
    expect(got?.headers['x-a2a-notification-id']).toBe(hook.received[0]?.headers['x-a2a-notification-id']);
    const after = await eventually(async () => {
      const page = await asRoot(`/tasks/${id}`);
      return page.outbox.length === 0 ? page : undefined;
    });
    expect(after.attempts[0]).toMatchObject({ status: 200, outcome: 'delivered', attempt: 1 });
    const audited = await eventually(async () =>
      agent.logs.find((l) => l.audit === 'push-redeliver' && l.taskId === id),
    );
    expect(audited).toMatchObject({
      operator: 'ops/root',
      owner: 'api-key:acme/alice',
      configId: letter.webhook,
      seq: letter.seq,
    });
    // Delivered: nothing to deliver again.
    const twice = await post('root', `/tasks/${id}/deliveries/${letter.webhook}/${letter.seq}/redeliver`);
    expect(twice.status).toBe(404);
    expect((await post('root', `/tasks/${id}/deliveries/${letter.webhook}/0/redeliver`)).status).toBe(400);
  });

  it('tells the list of state changes over SSE, and a task page of its progress', async () => {
    const list = await openSse(`${agent.url}/console/api/events`, { headers: agent.as('root').credentials });
    expect(list.status).toBe(200);
    const task = await sleeper('bob');
    const changed = await eventually(async () => {
      const e = await list.next(10_000);
      return e?.event === 'changed' && e.data.tasks.some((t: Json) => t.id === task.id) ? e : undefined;
    });
    expect(changed.data.tasks.find((t: Json) => t.id === task.id).state).toMatch(/submitted|working/);
    list.close();

    const one = await openSse(`${agent.url}/console/api/events?task=${task.id}`, {
      headers: agent.as('root').credentials,
    });
    expect(one.status).toBe(200);
    // The sleep skill reports progress every second: the page hears its log grow.
    const grew = await eventually(async () => {
      const e = await one.next(10_000);
      return e?.event === 'task' ? e : undefined;
    });
    expect(grew.event).toBe('task');
    one.close();
    expect((await consoleApi('root', '/events?task=no-such-task')).status).toBe(404);
  });

  it('draws the last hour from the store: finished tasks by outcome, queue, run times, push success', async () => {
    const series = await asRoot('/activity');
    expect(series.minutes.length).toBeGreaterThanOrEqual(60);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(series.finished.completed)).toBeGreaterThanOrEqual(2);
    expect(sum(series.finished.canceled)).toBeGreaterThanOrEqual(1);
    expect(series.duration.p50.some((v: number | null) => v !== null && v >= 0)).toBe(true);
    expect(sum(series.push.delivered)).toBeGreaterThanOrEqual(1);
    expect(sum(series.push.failed)).toBeGreaterThanOrEqual(1);
    expect(series.push.successRate.some((v: number | null) => v !== null)).toBe(true);
    expect(series.queued).toHaveLength(series.minutes.length);
  });
});

describe('the operator console on an anonymous server', () => {
  it('lets the local user of a loopback server in, but not a page whose host name only resolves there', async () => {
    const agent = await launch();
    try {
      const task = await startTask(agent, skillMessage('sleep', { seconds: 1 }));
      const res = await fetch(`${agent.url}/console/api/tasks`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as Json).tasks.map((t: Json) => t.id)).toContain(task.id);
      // DNS rebinding: another site's name pointed at 127.0.0.1 is not this machine's user.
      const port = new URL(agent.url).port;
      const rebound = await new Promise<number>((resolve, reject) => {
        import('node:http').then(({ get }) =>
          get(
            {
              host: '127.0.0.1',
              port,
              path: '/console/api/tasks',
              headers: { Host: `evil.example:${port}` },
            },
            (r) => {
              r.resume();
              resolve(r.statusCode ?? 0);
            },
          ).on('error', reject),
        );
      });
      expect(rebound).toBe(403);
    } finally {
      await agent.stop();
    }
  });

  it('refuses everyone when anonymous callers are served on an address other machines reach', async () => {
    const agent = await launch({ env: { HOST: '0.0.0.0', ALLOW_ANONYMOUS: 'true' } });
    try {
      const port = new URL(agent.url).port;
      const res = await fetch(`http://127.0.0.1:${port}/console/api/tasks`);
      expect(res.status).toBe(403);
      expect(((await res.json()) as Json).detail).toMatch(/has none.*OPERATORS/);
    } finally {
      await agent.stop();
    }
  });
});

describe.skipIf((await skipWithoutPostgres()) !== undefined)(
  'the operator console across instances (PostgreSQL)',
  () => {
    it("one instance's page hears of tasks made, run and canceled through another", async () => {
      const cluster = await startCluster(2, {
        apiKeys: { alice: 'acme', root: 'ops' },
        env: { OPERATORS: 'ops/root' },
      });
      try {
        const [a, b] = cluster.agents as [Agent, Agent];
        const root = a.as('root').credentials;
        const list = await openSse(`${a.url}/console/api/events`, { headers: root });
        expect(list.status).toBe(200);
        const task = await startTask(b.as('alice'), skillMessage('sleep', { seconds: 600 }));
        await eventually(async () => {
          const e = await list.next(10_000);
          return e?.event === 'changed' && e.data.tasks.some((t: Json) => t.id === task.id) ? e : undefined;
        });
        // The task page on instance a follows the job's progress, wherever it runs.
        const one = await openSse(`${a.url}/console/api/events?task=${task.id}`, { headers: root });
        await eventually(async () => ((await one.next(10_000))?.event === 'task' ? true : undefined));
        // Canceled through instance b: instance a's list hears the state.
        const res = await fetch(`${b.url}/console/api/tasks/${task.id}/cancel`, {
          method: 'POST',
          headers: { ...b.as('root').credentials, 'Content-Type': 'application/json' },
          body: '{}',
        });
        expect(res.status).toBe(200);
        await eventually(async () => {
          const e = await list.next(10_000);
          return e?.data?.tasks?.some((t: Json) => t.id === task.id && t.state === 'canceled')
            ? e
            : undefined;
        });
        list.close();
        one.close();
      } finally {
        await cluster.close();
      }
    });
  },
);
