import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { send, skillMessage, startTask, V1 } from './a2a.js';

import { type Agent, freePort, launch } from './harness.js';

const RECEIVER = fileURLToPath(new URL('../examples/webhook-receiver.mjs', import.meta.url));

/** The receiver of docs/webhooks.md, as a user runs it: one JSON line per notification on stdout. */
function startReceiver(agentUrl: string) {
  const proc = spawn(process.execPath, [RECEIVER], {
    env: { ...process.env, AGENT_URL: agentUrl, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // biome-ignore lint/suspicious/noExplicitAny: printed lines are inspected freely
  const lines: any[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: proc.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line));
    for (const wake of waiters.splice(0)) wake();
  });
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const waitFor = async (found: (line: any) => boolean, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = lines.find(found);
      if (line) return line;
      if (Date.now() > deadline) throw new Error(`receiver printed no such line: ${JSON.stringify(lines)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };
  const listening = async () => `${(await waitFor((l) => l.listening)).listening}`;
  return { proc, lines, waitFor, listening };
}

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A token that parses, names a key and is signed by nobody: the receiver must look for the key. */
const unsignedToken = (kid: string, iss: string) =>
  `${b64({ alg: 'ES256', kid })}.${b64({ iss, notificationId: 'n1' })}.${b64('x'.repeat(64))}`;

/** POSTs a notification with `signature` to the receiver, as the agent would. */
const notify = (url: string, signature: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/a2a+json',
      'X-A2A-Notification-Id': 'n1',
      'X-A2A-Notification-Signature': signature,
    },
    body: '{}',
  });

/**
 * The agent's public address (its PUBLIC_URL), a reverse proxy to the agent that can be started
 * late: until then, the agent is unreachable at the address it signs as.
 */
function gateway(port: number, to: string): Promise<Server> {
  const server = createServer((req, res) => {
    const upstream = request(
      new URL(req.url ?? '/', to),
      { method: req.method, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

describe('examples/webhook-receiver.mjs (the walk-through of docs/webhooks.md)', () => {
  let agent: Agent;
  let receiver: ReturnType<typeof startReceiver>;
  let hook: string;

  beforeAll(async () => {
    agent = await launch({ env: { PUSH_ALLOW: '127.0.0.1' } });
    receiver = startReceiver(agent.url);
    hook = `${(await receiver.waitFor((l) => l.listening)).listening}/hook`;
  });

  afterAll(async () => {
    (receiver.proc as ChildProcess).kill();
    await agent.stop();
  });

  it('verifies the one completed notification of an export it registered for, with its token', async () => {
    // Long enough (a 1.5 s pause between its two chunks) that the webhook is registered before it
    // ends, also on a loaded machine: a task that ended first would owe this webhook nothing.
    const task = await startTask(agent, skillMessage('export', { rows: 20, chunkRows: 10, delayMs: 1500 }));
    const created = await agent.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId: task.id, url: hook, token: 'my-secret-token' },
      V1,
    );
    expect(created.body.result).toMatchObject({
      id: 'default',
      taskId: task.id,
      url: hook,
      token: '********',
    });
    const line = await receiver.waitFor((l) => l.body?.statusUpdate?.taskId === task.id);
    expect(line).toMatchObject({ verified: true, repeat: false, token: 'my-secret-token' });
    expect(line.body.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    // The next task's notification arrives after it: nothing more came for the first one.
    const { task: next } = await send(agent, skillMessage('export', { rows: 1 }), {
      returnImmediately: true,
      taskPushNotificationConfig: { url: hook },
    });
    await receiver.waitFor((l) => l.body?.statusUpdate?.taskId === next.id);
    expect(receiver.lines.filter((l) => l.body?.statusUpdate?.taskId === task.id)).toHaveLength(1);
    expect(receiver.lines.every((l) => l.verified !== false)).toBe(true);
  });

  it('answers 401 to a signature that does not verify (the agent rightly gives up), 503 to a key newer than its set', async () => {
    // A receiver of its own, whose first look at the keys is this test's.
    const fresh = startReceiver(agent.url);
    try {
      const url = `${await fresh.listening()}/hook`;
      const jwks = (await (await fetch(`${agent.url}/.well-known/jwks.json`)).json()) as {
        keys: { kid: string }[];
      };
      const kid = jwks.keys[0]?.kid as string;
      const res = await notify(url, unsignedToken(kid, agent.url));
      expect(res.status).toBe(401);
      expect(res.headers.get('retry-after')).toBeNull();
      const line = await fresh.waitFor((l) => l.status === 401);
      expect(line).toMatchObject({ verified: false, id: 'n1' });
      expect(line.error).toMatch(/signature verification failed/);

      // A key it has not seen, right after fetching the set: the agent may have just rotated to it,
      // and only the next fetch (after the 30 s cooldown) can tell. Until then: try again later.
      const unknown = await notify(url, unsignedToken('rotated-since', agent.url));
      expect(unknown.status).toBe(503);
      expect(unknown.headers.get('retry-after')).toBe('30');
      expect((await fresh.waitFor((l) => l.status === 503)).error).toContain('no key rotated-since');
    } finally {
      fresh.proc.kill();
    }
  });
});

describe('examples/webhook-receiver.mjs while the agent is unreachable from it', () => {
  const cleanup: (() => unknown)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it("answers 503 with Retry-After when it cannot fetch the agent's keys, 401 to a token that does not parse", async () => {
    const nobody = `http://127.0.0.1:${await freePort()}`;
    const receiver = startReceiver(nobody);
    cleanup.push(() => receiver.proc.kill());
    const hook = `${await receiver.listening()}/hook`;

    const res = await notify(hook, unsignedToken('k1', nobody));
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('30');
    const line = await receiver.waitFor((l) => l.status === 503);
    expect(line.error).toContain(`cannot fetch ${nobody}/.well-known/jwks.json`);
    expect(line.error).toContain('ECONNREFUSED');
    // Nothing to fetch for a token that is not one: the sender's fault, for good.
    expect((await notify(hook, 'not-a-token')).status).toBe(401);
  });

  it('the server retries the 503 and the notification is delivered once the agent is reachable', async () => {
    // The agent signs as its public address, where nothing answers yet.
    const publicPort = await freePort();
    const publicUrl = `http://127.0.0.1:${publicPort}`;
    const localPort = await freePort();
    const local = `http://127.0.0.1:${localPort}`;
    const agent = await launch({
      env: {
        PORT: String(localPort),
        PUBLIC_URL: publicUrl,
        PUSH_ALLOW: '127.0.0.1',
        PUSH_POLL_MS: '50',
        PUSH_RETRY_MS: '100',
        PUSH_RETRY_MAX_MS: '400',
      },
    });
    cleanup.push(() => agent.stop());
    const receiver = startReceiver(publicUrl);
    cleanup.push(() => receiver.proc.kill());
    const hook = `${await receiver.listening()}/hook`;

    // Called at its own port: its public one is down.
    const sent = await fetch(`${local}/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: skillMessage('export', { rows: 1 }),
          configuration: { returnImmediately: true, taskPushNotificationConfig: { url: hook } },
        },
      }),
    });
    const taskId = ((await sent.json()) as { result: { task: { id: string } } }).result.task.id;

    const refused = await receiver.waitFor((l) => l.status === 503);
    expect(refused.error).toContain(`cannot fetch ${publicUrl}/.well-known/jwks.json`);
    const retried = () => agent.logs.filter((l) => l.msg === 'push: will retry' && l.taskId === taskId);
    await expect.poll(() => retried().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    expect(retried()[0]?.error).toBe('receiver answered 503');

    const proxy = await gateway(publicPort, local);
    cleanup.push(() => new Promise((resolve) => proxy.close(resolve)));
    const delivered = await receiver.waitFor((l) => l.verified === true);
    expect(delivered).toMatchObject({ repeat: false, id: refused.id });
    expect(delivered.body.statusUpdate).toMatchObject({ taskId, status: { state: 'TASK_STATE_COMPLETED' } });
    expect(agent.logs.filter((l) => l.msg === 'push: dead-lettered')).toEqual([]);
  });
});
