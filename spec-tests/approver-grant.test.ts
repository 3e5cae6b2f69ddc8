import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, eventually, HANDLE, legacyMessage, skillMessage, startTask, V1 } from './a2a.js';
import { type Reply, request } from './faces.js';
import { type Agent, launch, userMessage } from './harness.js';

/**
 * A named approver answers a task that is not theirs: on every face and both protocol versions they
 * get back the receipt of their answer (task id, state, the prompt answered) and nothing of the
 * owner's: no history, artifacts, context id, input or metadata, on the answer and on every event
 * of its stream. Approver names say how the principal authenticated: a token of the same tenant
 * and subject is not the API-key principal the approval names.
 */

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
type Json = any;

/** What only the owner put into the task: none of it may reach the approver. */
const ROW_SECRET = 'owner-row-4f1c9e';
const META_SECRET = 'owner-meta-8b2d07';
const CONTEXT = 'owner-context-5a3e11';

/** An issuer's JWKS on loopback, and tokens of (tenant, sub) signed by it. */
class Issuer {
  #server?: Server;
  #key?: CryptoKey;
  readonly iss = 'https://issuer.approver-grant.example';
  readonly aud = 'taskhandle-approver-grant';
  url = '';

  async start(): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    this.#key = privateKey;
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }

  async bearer(tenant: string, sub: string): Promise<Record<string, string>> {
    const token = await new SignJWT({ sub, tenant })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(this.iss)
      .setAudience(this.aud)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(this.#key as CryptoKey);
    return { Authorization: `Bearer ${token}` };
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise((resolve) => this.#server?.close(resolve));
  }
}

/** How one face shows an approver's answer: the request, and where in the reply the task is. */
interface AnswerFace {
  name: string;
  send(approver: Agent, taskId: string): Promise<Reply>;
  /** The receipt as the face shows it (a Task; for /v1/jobs and the inbox, their small documents). */
  receipt(reply: Reply): Json;
  /** The state the answer left the task in (queued to run again), in the face's words. */
  state: string;
  stream?: boolean;
}

const post = (agent: Agent, path: string, body: unknown, headers: Record<string, string> = {}) =>
  request(
    `${agent.url}${path}`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...agent.credentials, ...headers },
      body: JSON.stringify(body),
    },
    { idleMs: 5000 },
  );
const rpc = (agent: Agent, version: '1.0' | '0.3', method: string, params: unknown) =>
  post(
    agent,
    '/',
    { jsonrpc: '2.0', id: 1, method, params },
    version === '1.0' ? { 'A2A-Version': '1.0' } : {},
  );

const answer = (taskId: string) => userMessage('approve', { taskId });
const legacyAnswer = (taskId: string) => legacyMessage([{ kind: 'text', text: 'approve' }], { taskId });
/** v0.3 REST speaks proto JSON: `content` instead of `parts`. */
const legacyRestAnswer = (taskId: string) => ({
  messageId: crypto.randomUUID(),
  role: 'ROLE_USER',
  content: [{ text: 'approve' }],
  taskId,
});
const v1Rest = { 'A2A-Version': '1.0' };

const FACES: AnswerFace[] = [
  {
    name: 'JSON-RPC v1.0 SendMessage (blocking)',
    send: (a, id) => rpc(a, '1.0', 'SendMessage', { message: answer(id) }),
    receipt: (r) => r.body.result.task,
    state: 'TASK_STATE_SUBMITTED',
  },
  {
    name: 'JSON-RPC v1.0 SendMessage (returnImmediately)',
    send: (a, id) =>
      rpc(a, '1.0', 'SendMessage', { message: answer(id), configuration: { returnImmediately: true } }),
    receipt: (r) => r.body.result.task,
    state: 'TASK_STATE_SUBMITTED',
  },
  {
    name: 'JSON-RPC v1.0 SendStreamingMessage',
    send: (a, id) => rpc(a, '1.0', 'SendStreamingMessage', { message: answer(id) }),
    receipt: (r) => r.events?.[0]?.data.result.task,
    state: 'TASK_STATE_SUBMITTED',
    stream: true,
  },
  {
    name: 'JSON-RPC v0.3 message/send (blocking)',
    send: (a, id) =>
      rpc(a, '0.3', 'message/send', { message: legacyAnswer(id), configuration: { blocking: true } }),
    receipt: (r) => r.body.result,
    state: 'submitted',
  },
  {
    name: 'JSON-RPC v0.3 message/send (not blocking)',
    send: (a, id) =>
      rpc(a, '0.3', 'message/send', { message: legacyAnswer(id), configuration: { blocking: false } }),
    receipt: (r) => r.body.result,
    state: 'submitted',
  },
  {
    name: 'JSON-RPC v0.3 message/stream',
    send: (a, id) => rpc(a, '0.3', 'message/stream', { message: legacyAnswer(id) }),
    receipt: (r) => r.events?.[0]?.data.result,
    state: 'submitted',
    stream: true,
  },
  {
    name: 'REST v1.0 POST /rest/message:send',
    send: (a, id) => post(a, '/rest/message:send', { message: answer(id) }, v1Rest),
    receipt: (r) => r.body.task,
    state: 'TASK_STATE_SUBMITTED',
  },
  {
    name: 'REST v1.0 POST /rest/message:stream',
    send: (a, id) => post(a, '/rest/message:stream', { message: answer(id) }, v1Rest),
    receipt: (r) => r.events?.[0]?.data.task,
    state: 'TASK_STATE_SUBMITTED',
    stream: true,
  },
  {
    name: 'REST v0.3 POST /rest/v1/message:send',
    send: (a, id) =>
      post(a, '/rest/v1/message:send', { message: legacyRestAnswer(id), configuration: { blocking: true } }),
    receipt: (r) => r.body.task,
    state: 'TASK_STATE_SUBMITTED',
  },
  {
    name: 'REST v0.3 POST /rest/v1/message:stream',
    send: (a, id) => post(a, '/rest/v1/message:stream', { message: legacyRestAnswer(id) }),
    receipt: (r) => r.events?.[0]?.data.task,
    state: 'TASK_STATE_SUBMITTED',
    stream: true,
  },
  {
    name: 'POST /v1/jobs/{id}:input',
    send: (a, id) => post(a, `/v1/jobs/${id}:input`, { text: 'approve' }),
    receipt: (r) => r.body,
    state: 'working',
  },
  {
    name: 'POST /inbox/api/tasks/{id}/answer',
    send: (a, id) => post(a, `/inbox/api/tasks/${id}/answer`, { decision: 'approve' }),
    receipt: (r) => r.body,
    state: 'submitted',
  },
];

/**
 * What of the owner's a reply shows, as a list of findings (empty: nothing): the owner's markers in
 * any form, or any history, artifact, context id or metadata at all.
 */
function leaks(reply: Reply): string[] {
  const found: string[] = [];
  const text = JSON.stringify(reply.body ?? reply.events);
  for (const marker of [ROW_SECRET, META_SECRET, CONTEXT, HANDLE]) {
    if (text.includes(marker)) found.push(`holds ${marker}`);
  }
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(v, `${path}[${i}]`);
      });
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    for (const [key, v] of Object.entries(value)) {
      const at = `${path}.${key}`;
      if ((key === 'history' || key === 'artifacts') && Array.isArray(v) && v.length > 0) found.push(at);
      if (/^artifact(Update|-update)?$/.test(key) || v === 'artifact-update') found.push(at);
      if ((key === 'contextId' || key === 'context_id') && v !== '') found.push(`${at} = ${v}`);
      if (key === 'metadata' && v !== null && Object.keys(v as object).length > 0) found.push(at);
      if (key === 'input' || key === 'skill') found.push(at);
      walk(v, at);
    }
  };
  walk(reply.body ?? reply.events, '');
  return found;
}

/** The prompt a receipt carries: its status message's text (v1.0 `parts[].text`, v0.3 too, or `content`). */
const promptOf = (task: Json): string =>
  (task?.status?.message?.parts ?? task?.status?.message?.content ?? task?.status?.update?.content ?? [])
    .map((p: Json) => p.text ?? '')
    .join('');

/** The inbox's list for the caller whose credentials these are. */
const inboxOf = async (credentials: Record<string, string>): Promise<Json> =>
  (await fetch(`${agent.url}/inbox/api/waiting`, { headers: credentials })).json();

const issuer = new Issuer();
let agent: Agent;

beforeAll(async () => {
  await issuer.start();
  agent = await launch({
    apiKeys: { alice: 'acme', bob: 'globex' },
    env: {
      JWT_JWKS_URL: issuer.url,
      JWT_ISSUER: issuer.iss,
      JWT_AUDIENCE: issuer.aud,
      // Nothing listens on port 9: a webhook there is a valid registration that is never delivered.
      PUSH_ALLOW: '127.0.0.1',
    },
  });
});
afterAll(async () => {
  await agent?.stop();
  await issuer.stop();
});

/** alice's export of rows only she should see, waiting for `approver`'s sign-off. */
async function waitingExport(approver: string, owner: Agent = agent): Promise<string> {
  const message = skillMessage(
    'export',
    {
      data: [{ id: 1, note: ROW_SECRET }],
      approvalOverRows: 0,
      approval: { approver },
    },
    { contextId: CONTEXT, metadata: { note: META_SECRET } },
  );
  const { body } = await owner.rpc(
    'SendMessage',
    { message, configuration: { returnImmediately: true }, metadata: { note: META_SECRET } },
    V1,
  );
  if (body.error) throw new Error(`SendMessage failed: ${JSON.stringify(body.error)}`);
  const id = body.result.task.id as string;
  await owner.waitForState(id, 'TASK_STATE_INPUT_REQUIRED');
  return id;
}

describe('an approver’s answer carries nothing of the owner’s, on every face and version', () => {
  it.each(FACES)('$name: only the task id, its state and the prompt', async (face) => {
    const id = await waitingExport('globex/bob');
    const bob = agent.as('bob');
    const reply = await face.send(bob, id);
    // v0.3 REST answers a send with 201, as it does the owner's.
    expect([200, 201], JSON.stringify(reply.body ?? reply.events)).toContain(reply.status);
    expect(leaks(reply)).toEqual([]);
    const receipt = face.receipt(reply);
    expect(receipt.id ?? receipt.taskId).toBe(id);
    expect(receipt.status?.state ?? receipt.state ?? receipt.status).toBe(face.state);
    if (face.stream) {
      // One event, the receipt, and the stream ends: nothing after the answer is the approver's.
      expect(reply.events).toHaveLength(1);
      expect(reply.ended).toBe(true);
      expect(reply.events?.[0]?.id).toBeUndefined();
    }
    if (!['POST /v1/jobs/{id}:input', 'POST /inbox/api/tasks/{id}/answer'].includes(face.name)) {
      expect(promptOf(receipt)).toMatch(/^Approve exporting 1 rows as CSV\?/);
    }

    // The owner's task runs on to its artifact, with bob's answer in its history.
    const done = await agent.waitForState(id, 'TASK_STATE_COMPLETED');
    expect(artifactText(done.artifacts[0])).toContain(ROW_SECRET);
    const answered = done.history.find((m: Json) => m.metadata?.['taskhandle.answeredBy']);
    expect(answered.metadata['taskhandle.answeredBy']).toBe('globex/bob');

    // The audit line says it was an approver's answer, and how bob authenticated.
    const audit = await eventually(async () =>
      agent.logs.find((l) => l.audit === 'input' && l.taskId === id),
    );
    expect(audit).toMatchObject({
      principal: 'bob',
      tenant: 'globex',
      via: 'api-key',
      grant: 'approver',
      approver: 'globex/bob',
    });

    // Once it stopped waiting, the task does not exist for bob: not to read, not to answer again.
    expect((await bob.rpc('GetTask', { id }, V1)).body.error.code).toBe(-32001);
    expect((await bob.rpc('SendMessage', { message: answer(id) }, V1)).body.error.code).toBe(-32001);
  });

  it('an approver cannot register a webhook with the answer: it would hear the owner’s task', async () => {
    const id = await waitingExport('globex/bob');
    const bob = agent.as('bob');
    const hooked = await bob.rpc(
      'SendMessage',
      {
        message: answer(id),
        configuration: { taskPushNotificationConfig: { id: 'bobs', url: 'http://127.0.0.1:9/hook' } },
      },
      V1,
    );
    expect(hooked.body.error.code).toBe(-32001);
    expect((await agent.rpc('GetTask', { id }, V1)).body.result.status.state).toBe(
      'TASK_STATE_INPUT_REQUIRED',
    );
    const hooks = await agent.rpc('ListTaskPushNotificationConfigs', { taskId: id }, V1);
    expect(hooks.body.result.configs ?? []).toEqual([]);
    expect((await bob.rpc('SendMessage', { message: answer(id) }, V1)).body.result.task.id).toBe(id);
  });

  it('an approver’s answer naming a context is refused alike whatever the value: it confirms nothing', async () => {
    const id = await waitingExport('globex/bob');
    const bob = agent.as('bob');
    const errors = [];
    for (const contextId of [CONTEXT, 'a-guess']) {
      const reply = await bob.rpc('SendMessage', { message: { ...answer(id), contextId } }, V1);
      errors.push(reply.body.error);
    }
    expect(errors[0].code).toBe(-32602);
    expect(errors[1]).toEqual(errors[0]);
    expect(JSON.stringify(errors)).not.toContain(CONTEXT);
    expect((await bob.rpc('SendMessage', { message: answer(id) }, V1)).body.result.task.id).toBe(id);
  });

  it('the owner answering its own task still gets the whole task back', async () => {
    const id = await waitingExport('globex/bob');
    const reply = await rpc(agent, '1.0', 'SendMessage', { message: answer(id) });
    const task = reply.body.result.task;
    expect(task.contextId).toBe(CONTEXT);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(artifactText(task.artifacts[0])).toContain(ROW_SECRET);
    const audit = await eventually(async () =>
      agent.logs.find((l) => l.audit === 'input' && l.taskId === id),
    );
    expect(audit).toMatchObject({ principal: 'alice', via: 'api-key', grant: 'owner' });
  });
});

describe('approver names say how the principal authenticated', () => {
  it('a token with the tenant and subject of the named API-key approver is refused (not found)', async () => {
    const id = await waitingExport('globex/bob');
    const tokenBob = agent.as(await issuer.bearer('globex', 'bob'));
    const refused = await tokenBob.rpc('SendMessage', { message: answer(id) }, V1);
    expect(refused.body.error.code).toBe(-32001);
    const inbox = await post(tokenBob, `/inbox/api/tasks/${id}/answer`, { decision: 'approve' });
    expect(inbox.status).toBe(404);
    const waiting = await inboxOf(tokenBob.credentials);
    expect(waiting).toEqual({ caller: 'jwt:globex/bob', tasks: [] });
    // Still waiting, for the API key's bob.
    expect((await agent.rpc('GetTask', { id }, V1)).body.result.status.state).toBe(
      'TASK_STATE_INPUT_REQUIRED',
    );
    const reply = await rpc(agent.as('bob'), '1.0', 'SendMessage', { message: answer(id) });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
  });

  it('"jwt:tenant/sub" is answered by that token’s principal only', async () => {
    const id = await waitingExport('jwt:globex/bob');
    expect((await agent.as('bob').rpc('SendMessage', { message: answer(id) }, V1)).body.error.code).toBe(
      -32001,
    );
    const tokenBob = agent.as(await issuer.bearer('globex', 'bob'));
    const waiting = await inboxOf(tokenBob.credentials);
    expect(waiting.tasks.find((t: Json) => t.id === id)).toMatchObject({
      requester: 'acme/alice',
      role: 'approver',
    });
    const reply = await rpc(tokenBob, '1.0', 'SendMessage', { message: answer(id) });
    expect(leaks(reply)).toEqual([]);
    expect(reply.body.result.task).toMatchObject({ id, status: { state: 'TASK_STATE_SUBMITTED' } });
    const done = await agent.waitForState(id, 'TASK_STATE_COMPLETED');
    const answered = done.history.find((m: Json) => m.metadata?.['taskhandle.answeredBy']);
    expect(answered.metadata['taskhandle.answeredBy']).toBe('jwt:globex/bob');
    const audit = await eventually(async () =>
      agent.logs.find((l) => l.audit === 'input' && l.taskId === id),
    );
    expect(audit).toMatchObject({
      principal: 'bob',
      via: 'jwt',
      grant: 'approver',
      approver: 'jwt:globex/bob',
    });
  });

  it('"key:tenant/principal" names the API key’s principal, stored in its plain form', async () => {
    const id = await waitingExport('key:globex/bob');
    const tokenBob = agent.as(await issuer.bearer('globex', 'bob'));
    expect((await tokenBob.rpc('SendMessage', { message: answer(id) }, V1)).body.error.code).toBe(-32001);
    const reply = await rpc(agent.as('bob'), '1.0', 'SendMessage', { message: answer(id) });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
  });

  it('a malformed approver name is refused, naming the field and the two forms', async () => {
    for (const approver of ['globex bob', 'bob', 'globex/', 'oidc:globex/bob', 'jwt:globex/bo b']) {
      const task = await agent.rpc(
        'SendMessage',
        {
          message: skillMessage('approval', { action: 'Deploy', approver }),
          configuration: { returnImmediately: true },
        },
        V1,
      );
      expect(task.body.error.code, approver).toBe(-32602);
      expect(task.body.error.message).toContain('input.approver');
      expect(task.body.error.message).toContain('"tenant/principal"');
      expect(task.body.error.message).toContain('"jwt:tenant/principal"');
    }
    const job = await post(agent, '/v1/jobs', { skill: 'approval', input: { action: 'x', approver: 'bob' } });
    expect(job.status).toBe(400);
    expect(job.body.detail).toContain('input.approver');
  });

  it('the inbox names the caller and the requester as approver lists do', async () => {
    const task = await startTask(
      agent,
      skillMessage('approval', { action: 'Rotate', approver: 'globex/bob' }),
    );
    await agent.waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
    const waiting = await inboxOf(agent.as('bob').credentials);
    expect(waiting.caller).toBe('globex/bob');
    expect(waiting.tasks.find((t: Json) => t.id === task.id)).toMatchObject({
      requester: 'acme/alice',
      role: 'approver',
    });
    await post(agent.as('bob'), `/inbox/api/tasks/${task.id}/answer`, { decision: 'reject' });
    await agent.waitForState(task.id, 'TASK_STATE_REJECTED');
  });
});
