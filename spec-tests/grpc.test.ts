import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SendMessageRequest, type StreamResponse, TaskPushNotificationConfig, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { decodeErrorInfo, decodeStatus } from '@a2a-js/sdk/errors/grpc';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { credentials, Metadata, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, csvLines, HANDLE, skillRequest } from './a2a.js';
import { asTask, drain, eventIdOf, failure, GRPC, grpcClient, grpcInterface } from './grpc.js';
import { type Agent, launch, serveExpectingExit, tempDbPath } from './harness.js';

const GRPC_ON = { GRPC_PORT: '0' };
/** Webhooks to 127.0.0.1:9, where nothing listens: deliveries just fail. */
const HOOK = 'http://127.0.0.1:9/hook';
/** Sleeping tasks would hold a graceful stop for its whole default; release them sooner. */
const QUICK_STOP = { SHUTDOWN_TIMEOUT_MS: '200' };
const PRINCIPALS = { alice: 'acme', bob: 'globex', carol: 'acme' };

const taskOf = (events: StreamResponse[]) => {
  const first = events[0]?.payload;
  if (first?.$case !== 'task') throw new Error(`first event is ${first?.$case}`);
  return first.value;
};
const lastState = (events: StreamResponse[]) => {
  const last = events.at(-1)?.payload;
  return last?.$case === 'statusUpdate' ? last.value.status?.state : undefined;
};
const rawText = (parts: { content?: { $case: string; value: unknown } }[] = []) =>
  parts.map((p) => (p.content?.$case === 'raw' ? (p.content.value as Buffer).toString('utf8') : '')).join('');
const get = (client: Client, id: string) => client.getTask({ tenant: '', id, historyLength: undefined });
const subscribe = (client: Client, id: string, lastEventId?: string) =>
  client.resubscribeTask(
    { tenant: '', id },
    lastEventId === undefined ? undefined : { serviceParameters: { 'last-event-id': lastEventId } },
  );

describe('gRPC binding (the SDK client over the card’s GRPC interface)', () => {
  let agent: Agent;
  let alice: Client;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: PRINCIPALS,
      env: { ...GRPC_ON, ...QUICK_STOP, PUSH_ALLOW: '127.0.0.0/8', RUNNER_CONCURRENCY: '50' },
    });
    alice = await grpcClient(agent);
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('the card lists GRPC v1.0 at host:port, a gRPC target', async () => {
    const grpc = await grpcInterface(agent);
    expect(grpc).toMatchObject({ protocolBinding: 'GRPC', protocolVersion: '1.0' });
    expect(grpc?.url).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('GET / points to the gRPC target too', async () => {
    const home = (await (
      await fetch(`${agent.url}/`, { headers: { Accept: 'application/json' } })
    ).json()) as {
      a2a: { grpc?: unknown };
    };
    expect(home.a2a.grpc).toEqual({
      target: (await grpcInterface(agent))?.url,
      service: 'lf.a2a.v1.A2AService',
    });
  });

  it('create (blocking) and poll: the same task and handle as over JSON-RPC', async () => {
    const done = asTask(await alice.sendMessage(skillRequest('export', { rows: 4, chunkRows: 2 })));
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(csvLines(rawText(done.artifacts[0]?.parts))).toHaveLength(5);
    expect(done.metadata?.[HANDLE]).toMatchObject({ pollIntervalMs: 2000 });
    const started = asTask(
      await alice.sendMessage(skillRequest('sleep', { seconds: 30 }, { returnImmediately: true })),
    );
    const polled = await alice.getTask({ tenant: '', id: started.id, historyLength: 1 });
    expect(polled.id).toBe(started.id);
    expect(polled.history).toHaveLength(1);
    // The JSON-RPC face reads the very same record.
    expect((await agent.waitForState(started.id, 'TASK_STATE_WORKING')).id).toBe(started.id);
    await alice.cancelTask({ tenant: '', id: started.id, metadata: undefined });
  });

  it('a stream closed by its client leaves the task running; SubscribeToTask resumes after last-event-id', async () => {
    const first = await drain(
      alice.sendMessageStream(skillRequest('export', { rows: 6, chunkRows: 1, delayMs: 150 })),
      3,
    );
    const task = taskOf(first.events);
    const lastSeen = eventIdOf(first.events.at(-1) as StreamResponse);
    expect(lastSeen).toMatch(/^\d+$/);
    const resumed = await drain(subscribe(alice, task.id, lastSeen));
    expect(resumed.error).toBeUndefined();
    expect(lastState(resumed.events)).toBe(TaskState.TASK_STATE_COMPLETED);
    // Only what followed the last event seen, in order, each with its id.
    const ids = resumed.events.map((e) => Number(eventIdOf(e)));
    expect(ids[0]).toBeGreaterThan(Number(lastSeen));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    const final = await get(alice, task.id);
    expect(csvLines(rawText(final.artifacts[0]?.parts))).toHaveLength(7);
  });

  it('SubscribeToTask on a finished task: refused without last-event-id, replayed with it', async () => {
    const done = asTask(await alice.sendMessage(skillRequest('export', { rows: 2 })));
    const refused = await drain(subscribe(alice, done.id));
    expect(refused.error?.status).toBe(GRPC.FAILED_PRECONDITION);
    const replay = await drain(subscribe(alice, done.id, '0'));
    expect(replay.error).toBeUndefined();
    expect(lastState(replay.events)).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('cancel; a second cancel is TaskNotCancelable, an unknown task TaskNotFound (with ErrorInfo)', async () => {
    const started = asTask(
      await alice.sendMessage(skillRequest('sleep', { seconds: 30 }, { returnImmediately: true })),
    );
    const canceled = await alice.cancelTask({ tenant: '', id: started.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const again = await failure(alice.cancelTask({ tenant: '', id: started.id, metadata: undefined }));
    expect(again).toMatchObject({ status: GRPC.FAILED_PRECONDITION, reason: 'TASK_NOT_CANCELABLE' });
    const missing = await failure(get(alice, 'no-such-task'));
    expect(missing).toMatchObject({ status: GRPC.NOT_FOUND, reason: 'TASK_NOT_FOUND' });
  });

  it('push configs: create, get, list, delete, with secrets redacted; the SSRF guard applies', async () => {
    const started = asTask(
      await alice.sendMessage(skillRequest('sleep', { seconds: 30 }, { returnImmediately: true })),
    );
    const token = `token-${crypto.randomUUID()}`;
    const config = TaskPushNotificationConfig.fromJSON({
      taskId: started.id,
      id: 'ops',
      url: HOOK,
      token,
      authentication: { scheme: 'Bearer', credentials: 'secret' },
    });
    const created = await alice.createTaskPushNotificationConfig(config);
    expect(created).toMatchObject({ id: 'ops', taskId: started.id, url: HOOK, token: '********' });
    const got = await alice.getTaskPushNotificationConfig({ tenant: '', taskId: started.id, id: 'ops' });
    expect(got.url).toBe(HOOK);
    const listed = await alice.listTaskPushNotificationConfig({
      tenant: '',
      taskId: started.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((c) => c.id)).toEqual(['ops']);
    expect(JSON.stringify(listed)).not.toContain(token);
    await alice.deleteTaskPushNotificationConfig({ tenant: '', taskId: started.id, id: 'ops' });
    const gone = await failure(
      alice.getTaskPushNotificationConfig({ tenant: '', taskId: started.id, id: 'ops' }),
    );
    expect(gone.status).toBe(GRPC.NOT_FOUND);
    const private10 = await failure(
      alice.createTaskPushNotificationConfig({ ...config, url: 'http://10.0.0.1/hook' }),
    );
    expect(private10.status).toBe(GRPC.INVALID_ARGUMENT);
    await alice.cancelTask({ tenant: '', id: started.id, metadata: undefined });
  });

  it('a deadline shorter than the blocking bound: the send answers with the task as it stands, in time', async () => {
    const hurried = await grpcClient(agent, { call: { deadline: new Date(Date.now() + 2500) } });
    const task = asTask(await hurried.sendMessage(skillRequest('sleep', { seconds: 30 })));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    await alice.cancelTask({ tenant: '', id: task.id, metadata: undefined });
  });

  it('an approver answers over gRPC and gets the receipt only; the owner sees the answer', async () => {
    const owner = asTask(
      await alice.sendMessage(
        skillRequest(
          'approval',
          { action: 'Deploy', approver: 'globex/bob' },
          { returnImmediately: true },
          {
            metadata: { secret: 'owner-only' },
          },
        ),
      ),
    );
    await agent.waitForState(owner.id, 'TASK_STATE_INPUT_REQUIRED');
    const bob = await grpcClient(agent, { credentials: agent.as('bob').credentials });
    const answer = SendMessageRequest.fromJSON({
      message: {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        taskId: owner.id,
        parts: [{ text: 'approve' }],
      },
    });
    const receipt = asTask(await bob.sendMessage(answer));
    expect(receipt.id).toBe(owner.id);
    expect(receipt.contextId).toBe('');
    expect(receipt.history).toEqual([]);
    expect(JSON.stringify(receipt)).not.toContain('owner-only');
    const done = await agent.waitForState(owner.id, 'TASK_STATE_COMPLETED');
    expect(JSON.stringify(done.status)).toContain('globex/bob');
    // Before the wait and after it, the task does not exist for bob.
    expect((await failure(get(bob, owner.id))).status).toBe(GRPC.NOT_FOUND);
  });

  describe('ownership: another principal gets exactly what a task that does not exist gets', () => {
    let running: string;
    let done: string;
    beforeAll(async () => {
      running = asTask(
        await alice.sendMessage(skillRequest('sleep', { seconds: 600 }, { returnImmediately: true })),
      ).id;
      done = asTask(await alice.sendMessage(skillRequest('export', { rows: 2 }))).id;
      for (const taskId of [running, done])
        await alice.createTaskPushNotificationConfig(
          TaskPushNotificationConfig.fromJSON({ taskId, id: 'mine', url: HOOK }),
        );
      await agent.waitForState(running, 'TASK_STATE_WORKING');
    });

    const ops: [string, (c: Client, id: string) => Promise<unknown>][] = [
      ['GetTask', (c, id) => get(c, id)],
      ['CancelTask', (c, id) => c.cancelTask({ tenant: '', id, metadata: undefined })],
      [
        'SendMessage to the task',
        (c, id) => c.sendMessage(skillRequest('sleep', { seconds: 1 }, {}, { taskId: id })),
      ],
      [
        'SubscribeToTask',
        async (c, id) => {
          const { error } = await drain(subscribe(c, id));
          if (error) throw error;
        },
      ],
      [
        'CreateTaskPushNotificationConfig',
        (c, id) =>
          c.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: id, url: HOOK })),
      ],
      [
        'GetTaskPushNotificationConfig',
        (c, id) => c.getTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'mine' }),
      ],
      [
        'ListTaskPushNotificationConfigs',
        (c, id) => c.listTaskPushNotificationConfig({ tenant: '', taskId: id, pageSize: 0, pageToken: '' }),
      ],
      [
        'DeleteTaskPushNotificationConfig',
        (c, id) => c.deleteTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'mine' }),
      ],
    ];

    it.each(ops)('%s', async (_, op) => {
      for (const who of ['bob', 'carol']) {
        const intruder = await grpcClient(agent, { credentials: agent.as(who).credentials });
        for (const id of [running, done]) {
          const missing = crypto.randomUUID();
          const theirs = await failure(op(intruder, id));
          const nobodys = await failure(op(intruder, missing));
          expect(theirs.status, `${who} on alice's task`).toBe(GRPC.NOT_FOUND);
          expect(theirs.message.replaceAll(id, '<id>')).toBe(nobodys.message.replaceAll(missing, '<id>'));
        }
      }
    });

    it('after all that, alice’s tasks are as they were', async () => {
      expect((await get(alice, running)).status?.state).toBe(TaskState.TASK_STATE_WORKING);
      for (const taskId of [running, done]) {
        const { configs } = await alice.listTaskPushNotificationConfig({
          tenant: '',
          taskId,
          pageSize: 0,
          pageToken: '',
        });
        expect(configs.map((c) => c.id)).toEqual(['mine']);
      }
    });

    it('no credentials, or unknown ones: UNAUTHENTICATED', async () => {
      const tries: Record<string, string>[] = [
        {},
        { 'X-API-Key': 'th_not-a-key' },
        { Authorization: 'Basic eA==' },
      ];
      for (const credentials of tries) {
        const stranger = await grpcClient(agent, { credentials });
        expect((await failure(get(stranger, running))).status).toBe(GRPC.UNAUTHENTICATED);
      }
      // A Bearer API key is as good as X-API-Key.
      const bearer = await grpcClient(agent, {
        credentials: { Authorization: `Bearer ${agent.keys.alice}` },
      });
      expect((await get(bearer, running)).id).toBe(running);
    });
  });
});

/** A plain grpc-js client of the service, to send what the SDK client would not (metadata it sets itself). */
function rawClient(target: string) {
  const Ctor = makeGenericClientConstructor(A2AService, 'A2AService');
  return new Ctor(target, credentials.createInsecure()) as unknown as {
    getTask(req: unknown, md: Metadata, cb: (err: ServiceError | null, res: unknown) => void): void;
    close(): void;
  };
}
const rawGetTask = (target: string, md: Metadata, id = 'x') =>
  new Promise<ServiceError>((resolve, reject) => {
    const client = rawClient(target);
    client.getTask({ tenant: '', id, historyLength: undefined }, md, (err) => {
      client.close();
      if (err) resolve(err);
      else reject(new Error('expected an error'));
    });
  });

describe('gRPC errors, rates and versions (a plain grpc-js client)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: { ...GRPC_ON, RATE_LIMIT_PER_S: '1', RATE_LIMIT_BURST: '4' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('A2A errors carry google.rpc.ErrorInfo (domain a2a-protocol.org); a version other than 1.0 is refused', async () => {
    const target = (await grpcInterface(agent))?.url as string;
    const v03 = new Metadata();
    v03.set('a2a-version', '0.3');
    const refused = await rawGetTask(target, v03);
    expect(refused.code).toBe(GRPC.FAILED_PRECONDITION);
    expect(refused.details).toMatch(/1\.0/);
    const status = decodeStatus(refused.metadata.get('grpc-status-details-bin')[0] as Buffer);
    const info = decodeErrorInfo(status.details[0]?.value as Buffer);
    expect(info).toMatchObject({
      reason: 'VERSION_NOT_SUPPORTED',
      domain: 'a2a-protocol.org',
      metadata: { supportedVersions: '1.0' },
    });
    // No version at all: the service is v1.0's, so it is a v1.0 call (here: an unknown task); a patch
    // number is not considered.
    const missing = await rawGetTask(target, new Metadata());
    expect(missing.code).toBe(GRPC.NOT_FOUND);
    const patch = new Metadata();
    patch.set('a2a-version', '1.0.2');
    expect((await rawGetTask(target, patch)).code).toBe(GRPC.NOT_FOUND);
  });

  it('a request message over MAX_BODY_BYTES: RESOURCE_EXHAUSTED, before it is decoded', async () => {
    const target = (await grpcInterface(agent))?.url as string;
    const huge = await rawGetTask(target, new Metadata(), 'x'.repeat(2 * 1024 * 1024));
    expect(huge.code).toBe(GRPC.RESOURCE_EXHAUSTED);
  });

  it('a request nesting deeper than MAX_JSON_DEPTH: INVALID_ARGUMENT, as a JSON body is refused', async () => {
    let deep: Record<string, unknown> = { x: 1 };
    for (let i = 0; i < 100; i++) deep = { a: deep };
    const client = await grpcClient(agent);
    const refused = await failure(
      client.sendMessage(skillRequest('sleep', { seconds: 1 }, {}, { metadata: deep })),
    );
    expect(refused.status).toBe(GRPC.INVALID_ARGUMENT);
    expect(refused.message).toMatch(/MAX_JSON_DEPTH/);
  });

  it('over the rate: RESOURCE_EXHAUSTED, saying when to retry', async () => {
    const target = (await grpcInterface(agent))?.url as string;
    const errors: ServiceError[] = [];
    // Twice the burst, at once: whatever the earlier tests left in the bucket, some are refused.
    for (let i = 0; i < 8; i++) errors.push(await rawGetTask(target, new Metadata()));
    const limited = errors.find((e) => e.code === GRPC.RESOURCE_EXHAUSTED);
    expect(limited?.details).toMatch(/retry after \d+ s/);
  });
});

describe('gRPC calls and the rate limit', () => {
  // A caller is admitted by the GetTask hot path, by the SDK's user builder, or by the first and then
  // handed to the second: one rate-limit token a call whichever way it goes.

  it('a GetTask the task cache cannot answer (an unknown task) spends one request of the rate, not two', async () => {
    const agent = await launch({ env: { ...GRPC_ON, RATE_LIMIT_PER_S: '1', RATE_LIMIT_BURST: '4' } });
    try {
      const target = (await grpcInterface(agent))?.url as string;
      // The burst, one after another: each is answered NOT_FOUND by the SDK's path after the hot
      // path tried the cache; a call admitted by both would be refused from the third on.
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) codes.push((await rawGetTask(target, new Metadata())).code);
      expect(codes).toEqual([GRPC.NOT_FOUND, GRPC.NOT_FOUND, GRPC.NOT_FOUND, GRPC.NOT_FOUND]);
    } finally {
      await agent.stop();
    }
  });

  it('a SendMessage spends one request of the rate, answered or refused, and a refusal keeps its ErrorInfo', async () => {
    const agent = await launch({
      env: { ...GRPC_ON, ...QUICK_STOP, RATE_LIMIT_PER_S: '1', RATE_LIMIT_BURST: '4' },
    });
    try {
      const client = await grpcClient(agent);
      const sent = asTask(
        await client.sendMessage(skillRequest('sleep', { seconds: 60 }, { returnImmediately: true })),
      );
      expect(sent.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
      const unknown = await failure(client.sendMessage(skillRequest('no-such-skill', {})));
      expect(unknown).toMatchObject({ status: GRPC.INVALID_ARGUMENT, reason: 'INVALID_PARAMS' });
      expect(unknown.message).toMatch(/no-such-skill/);
      // The burst's last two: a call admitted twice would have been refused at the third.
      for (let i = 0; i < 2; i++)
        asTask(await client.sendMessage(skillRequest('sleep', { seconds: 60 }, { returnImmediately: true })));
      expect((await failure(client.sendMessage(skillRequest('sleep', { seconds: 60 })))).status).toBe(
        GRPC.RESOURCE_EXHAUSTED,
      );
    } finally {
      await agent.stop();
    }
  });
});

describe('gRPC and MAX_ACTIVE_TASKS', () => {
  it('a caller at its limit of unfinished tasks: RESOURCE_EXHAUSTED', async () => {
    const agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { ...GRPC_ON, ...QUICK_STOP, MAX_ACTIVE_TASKS: '1' },
    });
    try {
      const alice = await grpcClient(agent);
      const first = asTask(
        await alice.sendMessage(skillRequest('sleep', { seconds: 30 }, { returnImmediately: true })),
      );
      const second = await failure(
        alice.sendMessage(skillRequest('sleep', { seconds: 30 }, { returnImmediately: true })),
      );
      expect(second.status).toBe(GRPC.RESOURCE_EXHAUSTED);
      await alice.cancelTask({ tenant: '', id: first.id, metadata: undefined });
    } finally {
      await agent.stop();
    }
  });
});

describe('gRPC restart mid-stream', () => {
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  it('a stream cut by a stop ends UNAVAILABLE; the client resumes after the restart from its last event', async () => {
    const dbPath = tempDbPath();
    // A short stop: the export is released (and run again after the restart) instead of waited for.
    const env = { ...GRPC_ON, ...QUICK_STOP, LEASE_MS: '1000', RUNNER_POLL_MS: '100' };
    const first = await launch({ dbPath, apiKeys: { alice: 'acme' }, env });
    const before = await grpcClient(first);
    const request = skillRequest('export', { rows: 20, chunkRows: 1, delayMs: 150 });
    const seen: StreamResponse[] = [];
    const stream = before.sendMessageStream(request);
    let cut: { status: number; message: string } | undefined;
    try {
      for await (const e of stream) {
        seen.push(e);
        if (seen.length === 4) void first.stop();
      }
    } catch (err) {
      cut = err as { status: number; message: string };
    }
    expect(cut?.status).toBe(GRPC.UNAVAILABLE);
    const taskId = taskOf(seen).id;
    const lastSeen = eventIdOf(seen.at(-1) as StreamResponse) as string;

    const second = await launch({ dbPath, apiKeys: { alice: 'acme' }, env });
    agents.push(second);
    const after = await grpcClient(second);
    const resumed = await drain(subscribe(after, taskId, lastSeen));
    expect(resumed.error).toBeUndefined();
    expect(lastState(resumed.events)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(Number(eventIdOf(resumed.events[0] as StreamResponse))).toBeGreaterThan(Number(lastSeen));
    const task = await get(after, taskId);
    expect(csvLines(artifactText({ parts: task.artifacts[0]?.parts.map(asBase64) }))).toHaveLength(21);
  });
});

const asBase64 = (p: { content?: { $case: string; value: unknown } }) => ({
  raw: p.content?.$case === 'raw' ? (p.content.value as Buffer).toString('base64') : '',
});

describe('gRPC transport security', () => {
  it('TLS with GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE: a client trusting the certificate gets in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskhandle-tls-'));
    const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    const agent = await launch({
      apiKeys: { alice: 'acme' },
      env: { ...GRPC_ON, GRPC_TLS_CERT_FILE: cert, GRPC_TLS_KEY_FILE: key },
    });
    try {
      const trusted = await grpcClient(agent, { channel: credentials.createSsl(readFileSync(cert)) });
      const done = asTask(await trusted.sendMessage(skillRequest('export', { rows: 1 })));
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const plaintext = await grpcClient(agent);
      expect((await failure(get(plaintext, done.id))).status).toBe(GRPC.UNAVAILABLE);
    } finally {
      await agent.stop();
    }
  });

  it('plaintext on an address other machines reach is refused at start, unless allowed', async () => {
    const refused = await serveExpectingExit({ ...GRPC_ON, HOST: '0.0.0.0', ALLOW_ANONYMOUS: 'true' });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/GRPC_PORT=0: refusing plaintext gRPC.*GRPC_TLS_CERT_FILE/);
    const half = await serveExpectingExit({ ...GRPC_ON, GRPC_TLS_CERT_FILE: '/tmp/cert.pem' });
    expect(half.stderr).toMatch(/GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE: set both/);
  });
});

describe('gRPC off (the default)', () => {
  it('the card lists no GRPC interface', async () => {
    const agent = await launch();
    try {
      expect(await grpcInterface(agent)).toBeUndefined();
    } finally {
      await agent.stop();
    }
  });
});

describe('examples/grpc-client.mjs (the example of docs/walkthrough.md)', () => {
  it('runs as printed against a server with GRPC_PORT and API keys', async () => {
    const agent = await launch({ apiKeys: { alice: 'acme' }, env: GRPC_ON });
    try {
      const example = fileURLToPath(new URL('../examples/grpc-client.mjs', import.meta.url));
      const { stdout } = await promisify(execFile)(process.execPath, [example], {
        env: { ...process.env, AGENT_URL: agent.url, API_KEY: agent.keys.alice },
      });
      expect(stdout).toMatch(/^card: GRPC 1\.0 at 127\.0\.0\.1:\d+$/m);
      expect(stdout).toMatch(/^polled: TASK_STATE_\w+, poll again in 2000 ms$/m);
      expect(stdout).toMatch(/^resumed event \d+: statusUpdate TASK_STATE_COMPLETED$/m);
      expect(stdout).toMatch(/^done: TASK_STATE_COMPLETED$/m);
    } finally {
      await agent.stop();
    }
  });
});
