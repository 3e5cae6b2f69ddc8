import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, legacyMessage, send, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch, type RpcReply, tempDbPath } from './harness.js';

/** Loopback webhooks are refused unless opened; nothing listens on port 9, so deliveries just fail. */
const LOOPBACK = { PUSH_ALLOW: '127.0.0.0/8' };
/** The sleeping tasks below would hold a graceful stop for its whole 10 s default; release them sooner. */
const QUICK_STOP = { SHUTDOWN_TIMEOUT_MS: '200' };
const HOOK = 'http://127.0.0.1:9/hook';
const REDACTED = '********';
const NOT_FOUND = -32001;
const INVALID_PARAMS = -32602;

/** A task that stays working long enough to register webhooks on it. */
const sleepingTask = async (agent: Agent): Promise<string> =>
  (await startTask(agent, skillMessage('sleep', { seconds: 30 }))).id;

/** A secret no response may ever echo back: unique per call so a hit cannot be a coincidence. */
const secret = (what: string) => `${what}-${crypto.randomUUID()}`;

/** GETs a JSON document. */
// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
const getJson = async (url: string): Promise<any> => (await fetch(url)).json();

/** Fails naming the secret when it shows up anywhere in a reply. */
function expectRedacted(reply: RpcReply | { body: unknown }, ...secrets: string[]) {
  const text = JSON.stringify(reply.body);
  for (const s of secrets) expect(text, `reply leaks ${s}`).not.toContain(s);
}

describe('push notification configs', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: { ...LOOPBACK, ...QUICK_STOP, MAX_PUSH_CONFIGS: '3' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const v1 = (method: string, params: unknown) => agent.rpc(method, params, V1);
  const v03 = (method: string, params: unknown) => agent.rpc(method, params);

  describe('JSON-RPC v1.0', () => {
    it('Create, Get and List return the config with its token and credentials redacted', async () => {
      const taskId = await sleepingTask(agent);
      const token = secret('token');
      const credentials = secret('credentials');
      const created = await v1('CreateTaskPushNotificationConfig', {
        taskId,
        id: 'ops',
        url: HOOK,
        token,
        authentication: { scheme: 'Bearer', credentials },
      });
      const expected = {
        id: 'ops',
        taskId,
        url: HOOK,
        token: REDACTED,
        authentication: { scheme: 'Bearer', credentials: REDACTED },
      };
      expect(created.body.result).toMatchObject(expected);
      const got = await v1('GetTaskPushNotificationConfig', { taskId, id: 'ops' });
      expect(got.body.result).toMatchObject(expected);
      const listed = await v1('ListTaskPushNotificationConfigs', { taskId });
      expect(listed.body.result.configs).toEqual([expect.objectContaining(expected)]);
      for (const reply of [created, got, listed]) expectRedacted(reply, token, credentials);
    });

    it('a config without an id is "default"; another one without an id replaces it', async () => {
      const taskId = await sleepingTask(agent);
      const first = await v1('CreateTaskPushNotificationConfig', { taskId, url: `${HOOK}/1`, token: 't1' });
      expect(first.body.result).toMatchObject({ id: 'default', taskId, url: `${HOOK}/1` });
      await v1('CreateTaskPushNotificationConfig', { taskId, url: `${HOOK}/2` });
      const listed = await v1('ListTaskPushNotificationConfigs', { taskId });
      expect(listed.body.result.configs).toHaveLength(1);
      expect(listed.body.result.configs[0]).toMatchObject({ id: 'default', url: `${HOOK}/2` });
      // The replacement had no token: the old one must not linger.
      expect(listed.body.result.configs[0].token ?? '').toBe('');
    });

    it('a config with the id of an existing one replaces it; other ids sit beside it', async () => {
      const taskId = await sleepingTask(agent);
      await v1('CreateTaskPushNotificationConfig', { taskId, id: 'a', url: `${HOOK}/a1` });
      await v1('CreateTaskPushNotificationConfig', { taskId, id: 'b', url: `${HOOK}/b` });
      const replaced = await v1('CreateTaskPushNotificationConfig', { taskId, id: 'a', url: `${HOOK}/a2` });
      expect(replaced.body.result).toMatchObject({ id: 'a', url: `${HOOK}/a2` });
      const { body } = await v1('ListTaskPushNotificationConfigs', { taskId });
      const byId = Object.fromEntries(
        body.result.configs.map((c: { id: string; url: string }) => [c.id, c.url]),
      );
      expect(byId).toEqual({ a: `${HOOK}/a2`, b: `${HOOK}/b` });
    });

    it('a task takes at most MAX_PUSH_CONFIGS webhooks; replacing one by its id still works', async () => {
      const taskId = await sleepingTask(agent);
      for (const id of ['a', 'b', 'c']) {
        expect(
          (await v1('CreateTaskPushNotificationConfig', { taskId, id, url: HOOK })).body.error,
        ).toBeUndefined();
      }
      const refused = await v1('CreateTaskPushNotificationConfig', { taskId, id: 'd', url: HOOK });
      expect(refused.body.error.code).toBe(-32004);
      expect(refused.body.error.message).toBe(
        `Task ${taskId} has 3 push notification configs, the most it may have (MAX_PUSH_CONFIGS): delete one, or replace one by its id`,
      );
      expect(
        (await v1('CreateTaskPushNotificationConfig', { taskId, id: 'b', url: `${HOOK}2` })).body.error,
      ).toBeUndefined();
      await v1('DeleteTaskPushNotificationConfig', { taskId, id: 'a' });
      expect(
        (await v1('CreateTaskPushNotificationConfig', { taskId, id: 'd', url: HOOK })).body.error,
      ).toBeUndefined();
      const listed = await v1('ListTaskPushNotificationConfigs', { taskId });
      expect(listed.body.result.configs.map((c: { id: string }) => c.id).sort()).toEqual(['b', 'c', 'd']);
    });

    it('the all-events fragment is kept in the url as given', async () => {
      const taskId = await sleepingTask(agent);
      const url = `${HOOK}#taskhandle-events=all`;
      const created = await v1('CreateTaskPushNotificationConfig', { taskId, id: 'all', url });
      expect(created.body.result.url).toBe(url);
      expect((await v1('GetTaskPushNotificationConfig', { taskId, id: 'all' })).body.result.url).toBe(url);
    });

    it('Delete is idempotent; a deleted or unknown config id is TaskNotFound', async () => {
      const taskId = await sleepingTask(agent);
      await v1('CreateTaskPushNotificationConfig', { taskId, id: 'gone', url: HOOK });
      const deleted = await v1('DeleteTaskPushNotificationConfig', { taskId, id: 'gone' });
      expect(deleted.body.error).toBeUndefined();
      expect(deleted.body).toHaveProperty('result');
      const again = await v1('DeleteTaskPushNotificationConfig', { taskId, id: 'gone' });
      expect(again.body.error).toBeUndefined();
      expect((await v1('GetTaskPushNotificationConfig', { taskId, id: 'gone' })).body.error.code).toBe(
        NOT_FOUND,
      );
      expect((await v1('GetTaskPushNotificationConfig', { taskId, id: 'never' })).body.error.code).toBe(
        NOT_FOUND,
      );
      expect((await v1('ListTaskPushNotificationConfigs', { taskId })).body.result.configs ?? []).toEqual([]);
    });

    it('every operation on a task that does not exist is TaskNotFound', async () => {
      const taskId = 'no-such-task';
      const replies = [
        await v1('CreateTaskPushNotificationConfig', { taskId, url: HOOK }),
        await v1('GetTaskPushNotificationConfig', { taskId, id: 'default' }),
        await v1('ListTaskPushNotificationConfigs', { taskId }),
        await v1('DeleteTaskPushNotificationConfig', { taskId, id: 'default' }),
      ];
      for (const reply of replies) expect(reply.body.error?.code).toBe(NOT_FOUND);
    });

    it('a config sent inline with SendMessage is listed on the new task', async () => {
      const token = secret('inline');
      const { task } = await send(agent, skillMessage('sleep', { seconds: 30 }), {
        returnImmediately: true,
        taskPushNotificationConfig: { url: HOOK, token },
      });
      const listed = await v1('ListTaskPushNotificationConfigs', { taskId: task.id });
      expect(listed.body.result.configs).toEqual([
        expect.objectContaining({ id: 'default', taskId: task.id, url: HOOK, token: REDACTED }),
      ]);
      expectRedacted(listed, token);
    });

    it('bad input is InvalidParams naming the field', async () => {
      const taskId = await sleepingTask(agent);
      const noUrl = await v1('CreateTaskPushNotificationConfig', { taskId, token: 't' });
      expect(noUrl.body.error.code).toBe(INVALID_PARAMS);
      expect(noUrl.body.error.message).toContain('url');
      for (const scheme of ['', '  ']) {
        const noScheme = await v1('CreateTaskPushNotificationConfig', {
          taskId,
          url: HOOK,
          authentication: { scheme, credentials: 'c' },
        });
        expect(noScheme.body.error.code, JSON.stringify(scheme)).toBe(INVALID_PARAMS);
        expect(noScheme.body.error.message).toContain('authentication.scheme');
      }
      for (const [url, says] of [
        ['not a url', 'not a valid URL'],
        ['ftp://127.0.0.1/h', 'ftp:'],
        // A password in the URL would be shown by Get and List, where nothing else secret is.
        ['http://user:pass@127.0.0.1:9/h', 'credentials'],
      ] as const) {
        const bad = await v1('CreateTaskPushNotificationConfig', { taskId, url });
        expect(bad.body.error.code, url).toBe(INVALID_PARAMS);
        expect(bad.body.error.message).toContain(says);
      }
      // Nothing was stored by the refused calls.
      expect((await v1('ListTaskPushNotificationConfigs', { taskId })).body.result.configs ?? []).toEqual([]);
    });
  });

  describe('JSON-RPC v0.3', () => {
    it('set, get (with and without a config id), list and delete', async () => {
      const id = await sleepingTask(agent);
      const token = secret('v03');
      const set = await v03('tasks/pushNotificationConfig/set', {
        taskId: id,
        pushNotificationConfig: { url: HOOK, token },
      });
      expect(set.body.result).toMatchObject({ taskId: id, pushNotificationConfig: { url: HOOK } });
      const expected = { taskId: id, pushNotificationConfig: { id: 'default', url: HOOK, token: REDACTED } };
      const byId = await v03('tasks/pushNotificationConfig/get', { id, pushNotificationConfigId: 'default' });
      expect(byId.body.result).toMatchObject(expected);
      const implicit = await v03('tasks/pushNotificationConfig/get', { id });
      expect(implicit.body.result).toMatchObject(expected);
      const listed = await v03('tasks/pushNotificationConfig/list', { id });
      expect(listed.body.result).toEqual([expect.objectContaining(expected)]);
      for (const reply of [set, byId, implicit, listed]) expectRedacted(reply, token);

      const deleted = await v03('tasks/pushNotificationConfig/delete', {
        id,
        pushNotificationConfigId: 'default',
      });
      expect(deleted.body).toMatchObject({ result: null });
      expect((await v03('tasks/pushNotificationConfig/list', { id })).body.result).toEqual([]);
      const gone = await v03('tasks/pushNotificationConfig/get', { id });
      expect(gone.body.error.code).toBe(NOT_FOUND);
    });

    it('list on a task without configs is []; an unknown task is TaskNotFound', async () => {
      const id = await sleepingTask(agent);
      expect((await v03('tasks/pushNotificationConfig/list', { id })).body.result).toEqual([]);
      const unknown = await v03('tasks/pushNotificationConfig/list', { id: 'no-such-task' });
      expect(unknown.body.error.code).toBe(NOT_FOUND);
    });

    it('message/send with configuration.pushNotificationConfig registers it', async () => {
      const { body } = await v03('message/send', {
        message: legacyMessage([{ kind: 'data', data: { skill: 'sleep', input: { seconds: 30 } } }]),
        configuration: { blocking: false, pushNotificationConfig: { url: HOOK, token: 'legacy' } },
      });
      const listed = await v03('tasks/pushNotificationConfig/list', { id: body.result.id });
      expect(listed.body.result).toEqual([
        expect.objectContaining({ pushNotificationConfig: expect.objectContaining({ url: HOOK }) }),
      ]);
    });
  });

  describe('HTTP+JSON (REST)', () => {
    const rest = async (
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = { 'A2A-Version': '1.0' },
    ) => {
      const res = await fetch(`${agent.url}/rest${path}`, {
        method,
        headers: body === undefined ? headers : { 'Content-Type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };

    it('v1.0: create (201), list, get, delete twice (204), then get is 404 TASK_NOT_FOUND', async () => {
      const taskId = await sleepingTask(agent);
      const base = `/tasks/${taskId}/pushNotificationConfigs`;
      const token = secret('rest');
      const created = await rest('POST', base, { url: HOOK, token });
      expect(created.status).toBe(201);
      const expected = { id: 'default', taskId, url: HOOK, token: REDACTED };
      expect(created.body).toMatchObject(expected);
      const listed = await rest('GET', base);
      expect(listed.status).toBe(200);
      expect(listed.body.configs).toEqual([expect.objectContaining(expected)]);
      const got = await rest('GET', `${base}/default`);
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject(expected);
      for (const reply of [created, listed, got]) expectRedacted(reply, token);

      expect((await rest('DELETE', `${base}/default`)).status).toBe(204);
      expect((await rest('DELETE', `${base}/default`)).status).toBe(204);
      const gone = await rest('GET', `${base}/default`);
      expect(gone.status).toBe(404);
      expect(gone.body.error.details[0].reason).toBe('TASK_NOT_FOUND');
      const unknownTask = await rest('GET', '/tasks/no-such-task/pushNotificationConfigs');
      expect(unknownTask.status).toBe(404);
    });

    it('v1.0: a body without url is 400 INVALID_ARGUMENT', async () => {
      const taskId = await sleepingTask(agent);
      const r = await rest('POST', `/tasks/${taskId}/pushNotificationConfigs`, { token: 't' });
      expect(r.status).toBe(400);
      expect(r.body.error.status).toBe('INVALID_ARGUMENT');
    });

    it('v0.3 under /rest/v1: create (201) and get use the resource-name shape', async () => {
      const taskId = await sleepingTask(agent);
      const base = `/v1/tasks/${taskId}/pushNotificationConfigs`;
      const token = secret('rest-v03');
      // v0.3's REST binding carries the task in the body's resource name (the SDK reads it from there).
      const created = await rest(
        'POST',
        base,
        { name: `tasks/${taskId}`, pushNotificationConfig: { url: HOOK, token } },
        {},
      );
      expect(created.status).toBe(201);
      const expected = {
        name: `tasks/${taskId}/pushNotificationConfigs/default`,
        pushNotificationConfig: { id: 'default', url: HOOK, token: REDACTED },
      };
      expect(created.body).toMatchObject(expected);
      const got = await rest('GET', `${base}/default`, undefined, {});
      expect(got.status).toBe(200);
      expect(got.body).toMatchObject(expected);
      const listed = await rest('GET', base, undefined, {});
      expect(listed.body.configs).toEqual([expect.objectContaining(expected)]);
      for (const reply of [created, got, listed]) expectRedacted(reply, token);

      expect((await rest('DELETE', `${base}/default`, undefined, {})).status).toBe(204);
      const gone = await rest('GET', `${base}/default`, undefined, {});
      expect(gone.status).toBe(404);
      expect(gone.body.code).toBe(NOT_FOUND);
    });

    it("v0.3 under /rest/v1: the whole request's form (a2a-python, the kit), camelCase and snake_case, and no name at all", async () => {
      const taskId = await sleepingTask(agent);
      const base = `/v1/tasks/${taskId}/pushNotificationConfigs`;
      const forms = {
        // a2a-python 0.3's REST client.
        python: {
          parent: `tasks/${taskId}`,
          configId: 'py',
          config: { pushNotificationConfig: { url: HOOK } },
        },
        // The conformance kit, as its REST client sends it: proto field names, an empty token and
        // an empty authentication for none.
        kit: {
          parent: `tasks/${taskId}`,
          config_id: 'kit',
          config: {
            name: `tasks/${taskId}/pushNotificationConfigs/kit`,
            push_notification_config: { id: 'kit', url: HOOK, token: '', authentication: {} },
          },
        },
        // The URL names the task: the body need not.
        bare: { pushNotificationConfig: { id: 'bare', url: HOOK } },
      };
      for (const [id, body] of Object.entries({ py: forms.python, kit: forms.kit, bare: forms.bare })) {
        const created = await rest('POST', base, body, {});
        expect(created.status, id).toBe(201);
        expect(created.body, id).toMatchObject({
          name: `tasks/${taskId}/pushNotificationConfigs/${id}`,
          pushNotificationConfig: { id, url: HOOK },
        });
      }
    });

    it('v0.3 under /rest/v1: a task id that is not valid percent-encoding is a 400, not a 500', async () => {
      const r = await rest(
        'POST',
        '/v1/tasks/%ZZ/pushNotificationConfigs',
        { pushNotificationConfig: { url: HOOK } },
        {},
      );
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/not valid percent-encoding/);
    });

    it('v0.3 under /rest/v1: a body naming another task than the URL is refused (400), and nothing is stored on either', async () => {
      const taskId = await sleepingTask(agent);
      const other = await sleepingTask(agent);
      const refused = await rest(
        'POST',
        `/v1/tasks/${taskId}/pushNotificationConfigs`,
        { name: `tasks/${other}`, pushNotificationConfig: { id: 'x', url: HOOK } },
        {},
      );
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe(INVALID_PARAMS);
      expect(refused.body.message).toMatch(/names another task than the URL's/);
      for (const id of [taskId, other]) {
        const listed = await rest('GET', `/v1/tasks/${id}/pushNotificationConfigs`, undefined, {});
        expect(listed.body.configs ?? []).toEqual([]);
      }
    });
  });

  it('the agent card announces push notifications; the JWKS holds one public ES256 key', async () => {
    const card = await getJson(`${agent.url}/.well-known/agent-card.json`);
    expect(card.capabilities.pushNotifications).toBe(true);
    const jwks = await getJson(`${agent.url}/.well-known/jwks.json`);
    expect(jwks.keys.length).toBeGreaterThanOrEqual(1);
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
      for (const field of ['kid', 'x', 'y']) expect(typeof key[field], field).toBe('string');
      expect(key).not.toHaveProperty('d');
    }
  });
});

describe('push notification configs without PUSH_ALLOW', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ env: QUICK_STOP });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('a loopback webhook is refused as InvalidParams naming "loopback"', async () => {
    const taskId = await sleepingTask(agent);
    const { body } = await agent.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId, url: 'http://127.0.0.1:9/h' },
      V1,
    );
    expect(body.error.code).toBe(INVALID_PARAMS);
    expect(body.error.message).toContain('loopback');
    const inline = await agent.rpc(
      'SendMessage',
      {
        message: skillMessage('sleep', { seconds: 1 }),
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: { url: 'http://127.0.0.1:9/h' },
        },
      },
      V1,
    );
    expect(inline.body.error.code).toBe(INVALID_PARAMS);
    expect(inline.body.error.message).toContain('loopback');
  });
});

describe('push notification config persistence', () => {
  const agents: Agent[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
  });

  it('a config and the signing key survive a graceful restart on the same database', async () => {
    const dbPath = tempDbPath();
    const first = await launch({ dbPath, env: LOOPBACK });
    agents.push(first);
    const { task } = await send(first, skillMessage('export', { rows: 1 }));
    const token = secret('kept');
    await first.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId: task.id, id: 'kept', url: HOOK, token },
      V1,
    );
    const kids = async (a: Agent) =>
      ((await getJson(`${a.url}/.well-known/jwks.json`)).keys as { kid: string }[]).map((k) => k.kid);
    const kidsBefore = await kids(first);
    expect(await first.stop()).toBe(0);

    const second = await launch({ dbPath, env: LOOPBACK });
    agents.push(second);
    const got = await second.rpc('GetTaskPushNotificationConfig', { taskId: task.id, id: 'kept' }, V1);
    expect(got.body.result).toMatchObject({ id: 'kept', taskId: task.id, url: HOOK, token: REDACTED });
    expectRedacted(got, token);
    expect(await kids(second)).toEqual(kidsBefore);
  });
});

describe("webhooks over a principal's unfinished tasks (MAX_ACTIVE_PUSH_CONFIGS)", () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'globex' },
      env: { ...LOOPBACK, ...QUICK_STOP, MAX_ACTIVE_PUSH_CONFIGS: '3' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const put = (who: string, taskId: string, id: string) =>
    agent.as(who).rpc('CreateTaskPushNotificationConfig', { taskId, id, url: HOOK }, V1);
  const MESSAGE =
    'Your unfinished tasks have 3 push notification configs, the most allowed (MAX_ACTIVE_PUSH_CONFIGS): delete ones you no longer need, let tasks finish, or poll instead';

  it('counts across tasks, refuses one more on every face (JSON-RPC, REST, SendMessage), spares other principals, frees as tasks end', async () => {
    const first = (await startTask(agent.as('alice'), skillMessage('sleep', { seconds: 30 }))).id;
    const second = (await startTask(agent.as('alice'), skillMessage('sleep', { seconds: 30 }))).id;
    for (const [taskId, id] of [
      [first, 'a'],
      [first, 'b'],
      [second, 'c'],
    ] as const) {
      expect((await put('alice', taskId, id)).body.error).toBeUndefined();
    }
    const refused = await put('alice', second, 'd');
    expect(refused.body.error).toMatchObject({ code: -32004, message: MESSAGE });
    // Replacing one by its id adds none: still allowed.
    expect((await put('alice', second, 'c')).body.error).toBeUndefined();
    const overRest = await fetch(`${agent.url}/rest/tasks/${second}/pushNotificationConfigs`, {
      method: 'POST',
      headers: {
        'A2A-Version': '1.0',
        'Content-Type': 'application/json',
        'X-API-Key': agent.keys.alice as string,
      },
      body: JSON.stringify({ id: 'd', url: HOOK }),
    });
    expect(overRest.status).toBe(400);
    expect(((await overRest.json()) as { error: { message: string } }).error.message).toBe(MESSAGE);
    const sent = await agent.as('alice').rpc(
      'SendMessage',
      {
        message: skillMessage('sleep', { seconds: 30 }),
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: HOOK } },
      },
      V1,
    );
    expect(sent.body.error).toMatchObject({ code: -32004, message: MESSAGE });
    // Another principal's webhooks are its own.
    const bobs = (await startTask(agent.as('bob'), skillMessage('sleep', { seconds: 30 }))).id;
    expect((await put('bob', bobs, 'a')).body.error).toBeUndefined();
    // An ended task's webhooks set nothing off any more: they no longer count.
    await agent.as('alice').rpc('CancelTask', { id: first }, V1);
    await eventually(async () => ((await put('alice', second, 'd')).body.error ? undefined : true));
  });
});
