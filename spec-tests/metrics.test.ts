import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, rpcStream, send, skillMessage, startTask } from './a2a.js';
import { type Cluster, startCluster } from './cluster.js';
import { type Agent, launch, serveExpectingExit } from './harness.js';
import { skipWithoutPostgres } from './postgres.js';
import { metricsUrl, type Samples, sample, scrape } from './prometheus.js';

/**
 * Prometheus metrics from the outside: the real server, scraped over HTTP as Prometheus would,
 * after doing what each metric counts. Never a timing: only that the values moved.
 */
const TOKEN = randomBytes(24).toString('base64url');

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

async function call(agent: Agent, method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${agent.url}${path}`, {
    method,
    headers: { ...agent.credentials, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { ...((await res.json()) as Json), httpStatus: res.status };
}

const job = async (agent: Agent, skill: string, input: Json): Promise<string> => {
  const created = await call(agent, 'POST', '/v1/jobs', { skill, input });
  if (created.httpStatus !== 202) throw new Error(`create failed: ${JSON.stringify(created)}`);
  return created.taskId as string;
};

async function jobIn(agent: Agent, id: string, status: string): Promise<void> {
  await eventually(async () =>
    (await call(agent, 'GET', `/v1/jobs/${id}`)).status === status ? true : undefined,
  );
}

describe('metrics on SQLite: METRICS_PORT and METRICS_TOKEN', () => {
  let agent: Agent;
  let url: string;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { METRICS_PORT: '0', METRICS_TOKEN: TOKEN, CANCEL_GRACE_MS: '10000', PUSH_POLL_MS: '50' },
    });
    url = await eventually(async () => metricsUrl(agent));
  });
  afterAll(() => agent?.stop());

  it('answers only with the token, on both ports; the metrics port serves nothing else', async () => {
    for (const where of [url, `${agent.url}/metrics`]) {
      const none = await fetch(where);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toContain('Bearer');
      expect(((await none.json()) as Json).detail).toContain('METRICS_TOKEN');
      const wrong = await fetch(where, { headers: { Authorization: `Bearer ${TOKEN}x` } });
      expect(wrong.status).toBe(401);
      // An API key is not the metrics token.
      const key = await fetch(where, { headers: agent.credentials });
      expect(key.status).toBe(401);
      const post = await fetch(where, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(post.status).toBe(405);
      expect((await scrape(where, TOKEN)).size).toBeGreaterThan(0);
    }
    const other = await fetch(url.replace('/metrics', '/v1/jobs'));
    expect(other.status).toBe(404);
  });

  it('counts tasks, transitions, jobs, waits for people, cancels, refusals, webhooks and requests', async () => {
    const before = await scrape(url, TOKEN);
    const moved = (after: Samples, name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);

    const done = await job(agent, 'sleep', { seconds: 0 });
    await jobIn(agent, done, 'completed');

    const approval = await job(agent, 'approval', { action: 'Ship it' });
    await jobIn(agent, approval, 'input_required');
    // Read from the store at scrape time (cached for a second): polled, not assumed.
    await eventually(async () => {
      const now = await scrape(url, TOKEN);
      return sample(now, 'taskhandle_tasks', { state: 'input-required', scope: 'cluster' }) >= 1 || undefined;
    });
    expect(
      (await call(agent, 'POST', `/v1/jobs/${approval}:input`, { data: { decision: 'approve' } })).httpStatus,
    ).toBe(200);
    await jobIn(agent, approval, 'completed');

    const long = await job(agent, 'sleep', { seconds: 60 });
    expect((await call(agent, 'POST', `/v1/jobs/${long}:cancel`)).httpStatus).toBe(200);

    // No credentials: refused, and counted by kind.
    expect((await fetch(`${agent.url}/v1/jobs/${done}`)).status).toBe(401);

    // A webhook to a public host, while public addresses are closed (the harness's PUSH_ALLOW_PUBLIC=false).
    await send(agent, skillMessage('sleep', { seconds: 0 }), {
      taskPushNotificationConfig: { url: 'https://hooks.example.com/metrics' },
    });

    const after = await eventually(async () => {
      const now = await scrape(url, TOKEN);
      return moved(now, 'taskhandle_push_deliveries_total', { outcome: 'refused' }) >= 1 ? now : undefined;
    });
    expect(moved(after, 'taskhandle_tasks_created_total', { skill: 'sleep' })).toBe(3);
    expect(moved(after, 'taskhandle_tasks_created_total', { skill: 'approval' })).toBe(1);
    expect(
      moved(after, 'taskhandle_task_transitions_total', { skill: 'sleep', from: 'submitted', to: 'working' }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      moved(after, 'taskhandle_task_transitions_total', { skill: 'sleep', from: 'working', to: 'completed' }),
    ).toBe(2);
    expect(
      moved(after, 'taskhandle_task_transitions_total', {
        skill: 'approval',
        from: 'input-required',
        to: 'submitted',
      }),
    ).toBe(1);
    expect(
      moved(after, 'taskhandle_job_duration_seconds_count', { skill: 'sleep', outcome: 'completed' }),
    ).toBe(2);
    expect(
      moved(after, 'taskhandle_job_duration_seconds_count', { skill: 'approval', outcome: 'input-required' }),
    ).toBe(1);
    expect(moved(after, 'taskhandle_input_wait_seconds_count', { skill: 'approval' })).toBe(1);
    expect(moved(after, 'taskhandle_queue_wait_seconds_count', { skill: 'sleep' })).toBeGreaterThanOrEqual(2);
    const cancels = ['at-once', 'in-grace', 'forced'].map((outcome) =>
      moved(after, 'taskhandle_cancels_total', { skill: 'sleep', outcome }),
    );
    expect(cancels.reduce((a, b) => a + b)).toBe(1);
    expect(cancels[2]).toBe(0); // the sleep skill stops when aborted: never forced
    expect(moved(after, 'taskhandle_auth_failures_total', { kind: 'no-credentials' })).toBe(1);
    expect(moved(after, 'taskhandle_push_deliveries_total', { outcome: 'delivered' })).toBe(0);
    expect(
      moved(after, 'taskhandle_http_requests_total', { face: 'jobs', method: 'POST', status: '202' }),
    ).toBe(3);
    expect(
      moved(after, 'taskhandle_http_requests_total', { face: 'a2a-jsonrpc', method: 'POST', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      moved(after, 'taskhandle_http_request_duration_seconds_count', { face: 'jobs', method: 'GET' }),
    ).toBeGreaterThan(0);
    expect(moved(after, 'taskhandle_store_seconds_count', { op: 'create' })).toBe(4);
    expect(sample(after, 'taskhandle_sqlite_wal_bytes', { scope: 'instance' })).toBeGreaterThan(0);
    expect(sample(after, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);
    // No task id, principal or URL in any label.
    const keys = [...after.keys()].join('\n');
    for (const secret of [done, approval, long, 'alice', 'acme', 'hooks.example.com'])
      expect(keys).not.toContain(secret);
  });

  it('counts a SubscribeToTask stream open until its client goes away, and releases it then', async () => {
    const open = async () => sample(await scrape(url, TOKEN), 'taskhandle_open_streams', { kind: 'sse' });
    const before = await open();
    const { id } = await startTask(agent, skillMessage('sleep', { seconds: 60 }));
    const streams = await Promise.all(
      [0, 1, 2].map(() => rpcStream(agent, 'SubscribeToTask', { id }, { version: '1.0' })),
    );
    for (const s of streams) expect((await s.next())?.data.result.task.id).toBe(id);
    expect(await open()).toBe(before + 3);
    streams[0]?.close();
    await eventually(async () => ((await open()) === before + 2 ? true : undefined));
    // The others still follow the task to its end, and are released with it.
    await agent.rpc('CancelTask', { id }, { version: '1.0' });
    for (const s of streams.slice(1)) {
      const last = (await s.rest()).at(-1);
      expect(last?.data.result.statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
    }
    await eventually(async () => ((await open()) === before ? true : undefined));
  });

  it('counts a refusal for too many unfinished tasks', async () => {
    const limited = await launch({
      apiKeys: { alice: 'acme' },
      env: { METRICS_TOKEN: TOKEN, MAX_ACTIVE_TASKS: '1' },
    });
    try {
      await job(limited, 'approval', { action: 'first' });
      expect(
        (await call(limited, 'POST', '/v1/jobs', { skill: 'approval', input: { action: 'two' } })).httpStatus,
      ).toBe(429);
      const after = await scrape(`${limited.url}/metrics`, TOKEN);
      expect(sample(after, 'taskhandle_refusals_total', { reason: 'active-tasks' })).toBe(1);
      expect(sample(after, 'taskhandle_refusals_total', { reason: 'rate-limited' })).toBe(0);
    } finally {
      await limited.stop();
    }
  });
});

describe('metrics off, and refused settings', () => {
  it('off by default: /metrics is not served', async () => {
    const agent = await launch();
    try {
      const res = await fetch(`${agent.url}/metrics`);
      expect(res.status).toBe(404);
      expect(metricsUrl(agent)).toBeUndefined();
    } finally {
      await agent.stop();
    }
  });

  it('METRICS_PORT on an address other machines reach needs METRICS_TOKEN', async () => {
    const r = await serveExpectingExit({
      HOST: '0.0.0.0',
      METRICS_PORT: '0',
      ALLOW_ANONYMOUS: 'true',
      PORT: '0',
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toContain(
      'METRICS_PORT=0: HOST=0.0.0.0 is reachable from other machines; set METRICS_TOKEN',
    );
  });

  it('a short METRICS_TOKEN is refused, naming the rule', async () => {
    const r = await serveExpectingExit({ METRICS_TOKEN: 'short', PORT: '0' });
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toContain('METRICS_TOKEN="short": must be at least 16 printable characters');
  });
});

const noPostgres = await skipWithoutPostgres();

describe.skipIf(noPostgres !== undefined)('metrics on PostgreSQL: two instances', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(2, { env: { METRICS_TOKEN: TOKEN } });
  });
  afterAll(() => cluster?.close());

  it('each instance counts what it did; the store gauges are the cluster’s, the same on both', async () => {
    const [a, b] = cluster.agents as [Agent, Agent];
    const id = await job(a, 'approval', { action: 'cluster' });
    await jobIn(b, id, 'input_required');
    const waiting = (s: Samples) =>
      sample(s, 'taskhandle_tasks', { state: 'input-required', scope: 'cluster' });
    const [onA, onB] = await eventually(async () => {
      const both = await Promise.all([scrape(`${a.url}/metrics`, TOKEN), scrape(`${b.url}/metrics`, TOKEN)]);
      return both.every((s) => waiting(s) === 1) ? both : undefined;
    });
    expect(sample(onA, 'taskhandle_tasks_created_total', { skill: 'approval' })).toBe(1);
    expect(sample(onB, 'taskhandle_tasks_created_total', { skill: 'approval' })).toBe(0);
    for (const s of [onA, onB]) {
      expect(sample(s, 'taskhandle_store_pool_connections', { state: 'waiting', scope: 'instance' })).toBe(0);
      expect(s.has('taskhandle_sqlite_wal_bytes{scope="instance"}')).toBe(false);
    }
  });
});
