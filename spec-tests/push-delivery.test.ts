import { afterEach, describe, expect, it } from 'vitest';
import { eventually, rpcStream, send, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, type LaunchOptions, launch, tempDbPath, userMessage } from './harness.js';
import {
  type Behaviour,
  failFirst,
  hangFirst,
  type Received,
  type Receiver,
  type Reply,
  startReceiver,
  tokenClaims,
} from './webhook-receiver.js';

/**
 * Push notifications end to end: the real server POSTs to a real receiver on loopback. Only
 * 127.0.0.0/8 is opened (public addresses stay closed, as the harness sets), and retries are fast.
 */
const PUSH = {
  PUSH_ALLOW: '127.0.0.0/8',
  PUSH_RETRY_MS: '50',
  PUSH_RETRY_MAX_MS: '200',
  PUSH_TIMEOUT_MS: '500',
  PUSH_POLL_MS: '50',
  RUNNER_POLL_MS: '100',
};
const ALL_EVENTS = '#taskhandle-events=all';

const idOf = (r: Received): string => String(r.headers['x-a2a-notification-id']);
const ok = (r: Received): boolean => r.status !== undefined && r.status >= 200 && r.status < 300;
// biome-ignore lint/suspicious/noExplicitAny: bodies are inspected freely in tests
const json = (r: Received): any => JSON.parse(r.body);
const stateOf = (r: Received): string | undefined => json(r).statusUpdate?.status.state;
const inline = (url: string, extra: Record<string, unknown> = {}) => ({
  taskPushNotificationConfig: { url },
  ...extra,
});

/** Where each state sits in a task's life: notifications of one task never go backwards. */
const LIFECYCLE: Record<string, number> = {
  TASK_STATE_SUBMITTED: 0,
  TASK_STATE_WORKING: 1,
  TASK_STATE_INPUT_REQUIRED: 1,
  TASK_STATE_COMPLETED: 2,
  TASK_STATE_FAILED: 2,
  TASK_STATE_CANCELED: 2,
  TASK_STATE_REJECTED: 2,
};

/** The task's whole event log as a v1.0 subscriber replays it: the StreamResponses, in seq order. */
async function eventLog(agent: Agent, taskId: string): Promise<unknown[]> {
  const stream = await rpcStream(agent, 'SubscribeToTask', { id: taskId }, { ...V1, lastEventId: '0' });
  return (await stream.rest()).map((e) => e.data.result);
}

describe('push notification delivery', () => {
  const agents: Agent[] = [];
  const receivers: Receiver[] = [];
  const start = async (env: Record<string, string> = {}, o: Omit<LaunchOptions, 'env'> = {}) => {
    const agent = await launch({ ...o, env: { ...PUSH, ...env } });
    agents.push(agent);
    return agent;
  };
  const receiver = async (behaviour?: Behaviour) => {
    const r = await startReceiver(behaviour);
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  /** Checks the signature of every request `hook` got, all for `taskId`, signed by `agentUrl`. */
  async function verifyAll(hook: Receiver, agentUrl: string, taskId: string, issuer?: string) {
    for (const r of hook.received) {
      const claims = await hook.verify(agentUrl, r, { issuer });
      expect(claims).toMatchObject({ aud: hook.url(r.path), taskId, notificationId: idOf(r) });
    }
  }

  /**
   * Runs one more task with its own healthy webhook and waits for its notification: whatever the
   * dispatcher still had due before (a duplicate, a stray retry) would have gone out by then.
   */
  async function barrier(agent: Agent, message: unknown = skillMessage('export', { rows: 1 })) {
    const witness = await receiver();
    await send(agent, message, inline(witness.url()));
    await witness.waitFor((all) => all.some(ok));
  }

  /** With RUNNER_CONCURRENCY=1: tasks started now stay `submitted` until `open()`. */
  async function gate(agent: Agent) {
    const blocker = await startTask(agent, skillMessage('sleep', { seconds: 600 }));
    await agent.waitForState(blocker.id, 'TASK_STATE_WORKING');
    return { open: () => agent.rpc('CancelTask', { id: blocker.id }, V1) };
  }

  it('v1.0 config with token and authentication: one signed completed notification, and only one', async () => {
    const agent = await start({ RUNNER_CONCURRENCY: '1' });
    const hook = await receiver();
    const held = await gate(agent);
    const task = await startTask(agent, skillMessage('export', { rows: 3 }));
    expect(task.status.state).toBe('TASK_STATE_SUBMITTED');
    const created = await agent.rpc(
      'CreateTaskPushNotificationConfig',
      {
        taskId: task.id,
        url: hook.url(),
        token: 'tok-1',
        authentication: { scheme: 'Bearer', credentials: 'cred-1' },
      },
      V1,
    );
    expect(created.body.error).toBeUndefined();
    await held.open();
    await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');

    const [n] = await hook.waitFor((all) => all.length >= 1);
    if (!n) throw new Error('no notification');
    expect(n.status).toBe(200);
    expect(n.method).toBe('POST');
    expect(n.headers['content-type']).toBe('application/a2a+json');
    expect(n.headers['x-a2a-notification-token']).toBe('tok-1');
    expect(n.headers.authorization).toBe('Bearer cred-1');
    expect(idOf(n)).toMatch(/^[\w-]{16,}$/);
    // The body is the completed statusUpdate exactly as a subscriber sees it.
    expect(json(n)).toEqual((await eventLog(agent, task.id)).at(-1));
    expect(json(n).statusUpdate).toMatchObject({
      taskId: task.id,
      status: { state: 'TASK_STATE_COMPLETED' },
    });
    const claims = await hook.verify(agent.url, n);
    expect(claims).toMatchObject({
      iss: agent.url,
      aud: hook.url(),
      taskId: task.id,
      notificationId: idOf(n),
    });

    await barrier(agent);
    expect(hook.received).toHaveLength(1);
  });

  it('inline config with #taskhandle-events=all: every event, in log order, each with its own id', async () => {
    const agent = await start();
    const hook = await receiver();
    const message = skillMessage('export', { rows: 3, chunkRows: 1 });
    const { task } = await send(agent, message, inline(hook.url(`/all${ALL_EVENTS}`)));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    await hook.waitFor((all) => all.some((r) => ok(r) && stateOf(r) === 'TASK_STATE_COMPLETED'));
    await barrier(agent);

    const log = await eventLog(agent, task.id);
    const bodies = hook.received.map(json);
    // The caller's message first (subscribers do not get it back), then the log as a subscriber replays it.
    expect(bodies[0]).toEqual({ message: expect.objectContaining({ messageId: message.messageId }) });
    expect(bodies.slice(1)).toEqual(log);
    expect(bodies.filter((b) => b.artifactUpdate)).toHaveLength(3);
    const states = hook.received.map(stateOf).filter((s) => s !== undefined);
    expect(states[0]).toBe('TASK_STATE_SUBMITTED');
    expect(states.at(-1)).toBe('TASK_STATE_COMPLETED');
    const ranks = states.map((s) => LIFECYCLE[s] ?? -1);
    expect(ranks.every((r, i) => r >= 0 && r >= (ranks[i - 1] ?? 0))).toBe(true);
    expect(hook.received.every(ok)).toBe(true);
    expect(new Set(hook.received.map(idOf)).size).toBe(hook.received.length);
    await verifyAll(hook, agent.url, task.id);
  });

  it('a large artifact reaches webhooks by reference: each chunk links the download, no body carries the bytes', async () => {
    const agent = await start();
    const hook = await receiver();
    const { task } = await send(
      agent,
      skillMessage('export', { rows: 20_000 }),
      inline(hook.url(`/big${ALL_EVENTS}`)),
    );
    await hook.waitFor((all) => all.some((r) => ok(r) && stateOf(r) === 'TASK_STATE_COMPLETED'));
    const link = `${agent.url}/v1/jobs/${task.id}/artifacts/export-${task.id}`;
    const chunks = hook.received.map(json).filter((b) => b.artifactUpdate);
    expect(chunks).toHaveLength(4);
    for (const chunk of chunks) {
      const [part] = chunk.artifactUpdate.artifact.parts;
      expect(part).toMatchObject({ url: link, filename: 'export.csv', mediaType: 'text/csv' });
      expect(part.raw).toBeUndefined();
      expect(part.metadata['taskhandle.bytes']).toBeGreaterThan(100_000);
    }
    expect(Math.max(...hook.received.map((r) => r.raw.length))).toBeLessThan(16_000);
  });

  it('v0.3 config (tasks/pushNotificationConfig/set): the body is the Task, as application/json', async () => {
    const agent = await start({ RUNNER_CONCURRENCY: '1' });
    const hook = await receiver();
    const held = await gate(agent);
    const task = await startTask(agent, skillMessage('export', { rows: 2 }));
    const set = await agent.rpc('tasks/pushNotificationConfig/set', {
      taskId: task.id,
      pushNotificationConfig: {
        url: hook.url('/v03'),
        token: 'tok-03',
        authentication: { schemes: ['Bearer'], credentials: 'cred-03' },
      },
    });
    expect(set.body.error).toBeUndefined();
    await held.open();
    await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');

    const [n] = await hook.waitFor((all) => all.length >= 1);
    if (!n) throw new Error('no notification');
    expect(n.headers['content-type']).toBe('application/json');
    expect(n.headers['x-a2a-notification-token']).toBe('tok-03');
    expect(n.headers.authorization).toBe('Bearer cred-03');
    const body = json(n);
    expect(body).toMatchObject({ kind: 'task', id: task.id, status: { state: 'completed' } });
    expect(body.artifacts).toHaveLength(1);
    await verifyAll(hook, agent.url, task.id);
    await barrier(agent);
    expect(hook.received).toHaveLength(1);
  });

  it('a receiver failing the first 3 calls with 503 gets it on the 4th, with the same id each time', async () => {
    const agent = await start();
    const hook = await receiver(failFirst(3, 503));
    const { task } = await send(agent, skillMessage('export', { rows: 1 }), inline(hook.url()));
    await hook.waitFor((all) => all.some(ok));
    await barrier(agent);

    expect(hook.received.map((r) => r.status)).toEqual([503, 503, 503, 200]);
    expect(new Set(hook.received.map(idOf)).size).toBe(1);
    expect(new Set(hook.received.map((r) => r.body)).size).toBe(1);
    // Each attempt is signed afresh (its own jti), for the same body.
    const jtis = hook.received.map((r) => tokenClaims(r).jti);
    expect(new Set(jtis).size).toBe(4);
    expect(stateOf(hook.received[3] as Received)).toBe('TASK_STATE_COMPLETED');
    await verifyAll(hook, agent.url, task.id);
  });

  it("honours a busy receiver's Retry-After, up to PUSH_RETRY_MAX_MS", async () => {
    const agent = await start({ PUSH_RETRY_MAX_MS: '1500' });
    // Asks for 1 s first (more than the 50 ms backoff), then for an hour (capped at 1.5 s).
    const hook = await receiver((req) =>
      req.index < 2
        ? { status: req.index === 0 ? 503 : 429, headers: { 'Retry-After': req.index === 0 ? '1' : '3600' } }
        : { status: 200 },
    );
    const { task } = await send(agent, skillMessage('export', { rows: 1 }), inline(hook.url()));
    await hook.waitFor((all) => all.some(ok));
    await barrier(agent);
    const at = hook.received.map((r) => r.at);
    expect(hook.received.map((r) => r.status)).toEqual([503, 429, 200]);
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(950);
    expect((at[2] ?? 0) - (at[1] ?? 0)).toBeGreaterThanOrEqual(1450);
    await verifyAll(hook, agent.url, task.id);
  });

  it('a receiver down while the task finishes gets the notification once it is back on its port', async () => {
    const agent = await start();
    const hook = await receiver();
    await hook.close();
    const { task } = await send(agent, skillMessage('export', { rows: 1 }), inline(hook.url()));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const retries = () => agent.logs.filter((l) => l.msg === 'push: will retry' && l.taskId === task.id);
    await eventually(async () => (retries().length >= 2 ? true : undefined));
    expect(String(retries()[0]?.error)).toContain('ECONNREFUSED');
    expect(hook.received).toHaveLength(0);

    await hook.reopen();
    await hook.waitFor((all) => all.some(ok));
    await barrier(agent);
    expect(hook.received).toHaveLength(1);
    expect(stateOf(hook.received[0] as Received)).toBe('TASK_STATE_COMPLETED');
    expect(idOf(hook.received[0] as Received)).toBe(retries()[0]?.notificationId);
    await verifyAll(hook, agent.url, task.id);
  });

  it('a receiver slower than PUSH_TIMEOUT_MS once is retried and gets it, at most twice', async () => {
    const agent = await start();
    const hook = await receiver(hangFirst(1, 3000));
    const { task } = await send(agent, skillMessage('export', { rows: 1 }), inline(hook.url()));
    await hook.waitFor((all) => all.some(ok) && all[0]?.closedEarly === true);
    await barrier(agent);

    expect(hook.received.length).toBeLessThanOrEqual(2);
    expect(new Set(hook.received.map(idOf)).size).toBe(1);
    expect(hook.received.filter(ok)).toHaveLength(1);
    expect(agent.logs.some((l) => l.msg === 'push: will retry' && /timeout/.test(String(l.error)))).toBe(
      true,
    );
    await verifyAll(hook, agent.url, task.id);
  });

  const kill9 = (a: Agent) => a.kill9();
  const sigterm = (a: Agent) => a.stop().then(() => undefined);
  const FAILING: Reply = { status: 500 };
  const HANGING: Reply = { status: 200, delayMs: 60_000 };
  it.each([
    ['kill -9 between failed attempts', FAILING, kill9],
    ['SIGTERM between failed attempts', FAILING, sigterm],
    // The POST is out, its outcome never recorded: retried (same id) once the lease runs out.
    ['kill -9 during an attempt', HANGING, kill9],
  ])('%s: delivered after a restart on the same database, same id', async (_, failing, halt) => {
    const dbPath = tempDbPath();
    const first = await start({}, { dbPath });
    // Decided by who signed: every attempt of the first process fails, the restarted one's succeed.
    const hook = await receiver((r) => (tokenClaims(r).iss === first.url ? failing : { status: 200 }));
    const { task } = await send(first, skillMessage('export', { rows: 1 }), inline(hook.url()));
    await hook.waitFor((all) => all.length >= (failing === HANGING ? 1 : 2));
    await halt(first);

    const second = await start({}, { dbPath });
    // A delivery cut off by the kill is leased for PUSH_TIMEOUT_MS + 5 s before it is tried again.
    await hook.waitFor((all) => all.some(ok), 20_000);
    await barrier(second);

    const before = hook.received.filter((r) => tokenClaims(r).iss === first.url);
    const after = hook.received.filter((r) => tokenClaims(r).iss === second.url);
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(before.every((r) => r.status === 500 || r.closedEarly)).toBe(true);
    expect(after.map((r) => r.status)).toEqual([200]);
    expect(new Set(hook.received.map(idOf)).size).toBe(1);
    expect(stateOf(after[0] as Received)).toBe('TASK_STATE_COMPLETED');
    // The keys live beside the database: the restarted server publishes the key the first one signed with.
    for (const r of before) await hook.verify(second.url, r, { issuer: first.url });
    for (const r of after) await hook.verify(second.url, r);
    expect(tokenClaims(after[0] as Received).taskId).toBe(task.id);
  });

  it('events=all with a receiver failing every other request: one at a time, in seq order', async () => {
    const agent = await start();
    const hook = await receiver((r) => ({ status: r.index % 2 === 0 ? 500 : 200 }));
    const message = skillMessage('export', { rows: 3, chunkRows: 1 });
    const { task } = await send(agent, message, inline(hook.url(`/all${ALL_EVENTS}`)));
    await hook.waitFor((all) => all.some((r) => ok(r) && stateOf(r) === 'TASK_STATE_COMPLETED'));
    await barrier(agent);

    const log = await eventLog(agent, task.id);
    const all = hook.received;
    expect(all).toHaveLength(2 * (log.length + 1));
    // Each notification fails once and is retried at once: nothing later overtakes the failed one.
    for (let i = 0; i < all.length; i += 2) {
      const [failed, retried] = [all[i] as Received, all[i + 1] as Received];
      expect([failed.status, retried.status]).toEqual([500, 200]);
      expect(idOf(retried)).toBe(idOf(failed));
      expect(retried.body).toBe(failed.body);
    }
    const delivered = all.filter(ok);
    expect(delivered.map(json)).toEqual([
      { message: expect.objectContaining({ messageId: message.messageId }) },
      ...log,
    ]);
    expect(new Set(delivered.map(idOf)).size).toBe(delivered.length);
    await verifyAll(hook, agent.url, task.id);
  });

  it('410 Gone dead-letters that notification at once; the next ones still go out', async () => {
    const agent = await start();
    const hook = await receiver((r) => ({ status: r.index === 0 ? 410 : 200 }));
    const { task } = await send(
      agent,
      skillMessage('export', { rows: 1 }),
      inline(hook.url(`/all${ALL_EVENTS}`)),
    );
    await hook.waitFor((all) => all.some((r) => ok(r) && stateOf(r) === 'TASK_STATE_COMPLETED'));
    await barrier(agent);

    const [gone, ...rest] = hook.received;
    if (!gone) throw new Error('no notification');
    expect(gone.status).toBe(410);
    expect(hook.received.filter((r) => idOf(r) === idOf(gone))).toHaveLength(1);
    expect(rest.every(ok)).toBe(true);
    expect(rest.map(json)).toEqual(await eventLog(agent, task.id));
    expect(new Set(hook.received.map(idOf)).size).toBe(hook.received.length);
    const dead = agent.logs.filter((l) => l.msg === 'push: dead-lettered');
    expect(dead.map((l) => l.notificationId)).toEqual([idOf(gone)]);
    expect(String(dead[0]?.error)).toContain('410');
    await verifyAll(hook, agent.url, task.id);
  });

  it('a webhook whose host name never resolves (.invalid) is dead-lettered after PUSH_DNS_MAX_ATTEMPTS, not retried for 24 h', async () => {
    // RFC 6761: no name under .invalid ever resolves. The allow-list opens it, so it is really looked up.
    const agent = await start({
      PUSH_ALLOW: '127.0.0.0/8,hook.invalid',
      PUSH_DNS_MAX_ATTEMPTS: '3',
      PUSH_TIMEOUT_MS: '5000',
    });
    const { task } = await send(
      agent,
      skillMessage('export', { rows: 1 }),
      inline('http://hook.invalid/hook'),
    );
    const dead = () => agent.logs.filter((l) => l.msg === 'push: dead-lettered' && l.taskId === task.id);
    const [first] = await eventually(async () => (dead().length > 0 ? dead() : undefined));
    expect(first).toMatchObject({ level: 40, attempt: 3 });
    expect(String(first?.error)).toMatch(
      /^host name does not resolve after 3 attempts \(.*\b(ENOTFOUND|EAI_NONAME|ENODATA)\b/,
    );
    const retries = agent.logs.filter(
      (l) => l.msg === 'push: will retry' && l.notificationId === first?.notificationId,
    );
    expect(retries.map((l) => l.attempt)).toEqual([1, 2]);
  });

  it('a canceled task notifies exactly once, with state canceled', async () => {
    const agent = await start();
    const hook = await receiver();
    const { task } = await send(
      agent,
      skillMessage('sleep', { seconds: 600 }),
      inline(hook.url(), { returnImmediately: true }),
    );
    await agent.waitForState(task.id, 'TASK_STATE_WORKING');
    const canceled = await agent.rpc('CancelTask', { id: task.id }, V1);
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
    await hook.waitFor((all) => all.length >= 1);
    await barrier(agent);

    expect(hook.received).toHaveLength(1);
    expect(hook.received.map(stateOf)).toEqual(['TASK_STATE_CANCELED']);
    await verifyAll(hook, agent.url, task.id);
  });

  it('input-required notifies once, then the answer leads to one completed notification', async () => {
    const agent = await start({}, { conformance: true });
    const hook = await receiver();
    const ask = userMessage('go', { messageId: `tck-input-required-${crypto.randomUUID()}` });
    const { task } = await send(agent, ask, inline(hook.url()));
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    await hook.waitFor((all) => all.length >= 1);
    expect(hook.received.map(stateOf)).toEqual(['TASK_STATE_INPUT_REQUIRED']);

    const answered = await send(agent, userMessage('here you are', { taskId: task.id }));
    expect(answered.task.status.state).toBe('TASK_STATE_COMPLETED');
    await hook.waitFor((all) => all.length >= 2);
    await barrier(agent, userMessage('x', { messageId: `tck-complete-task-${crypto.randomUUID()}` }));

    expect(hook.received.map(stateOf)).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED']);
    expect(hook.received.every(ok)).toBe(true);
    expect(new Set(hook.received.map(idOf)).size).toBe(2);
    expect(json(hook.received[1] as Received).statusUpdate.status.message.parts).toEqual([
      { text: 'Received: here you are' },
    ]);
    await verifyAll(hook, agent.url, task.id);
  });
});
