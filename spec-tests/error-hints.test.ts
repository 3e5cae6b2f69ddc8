import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { legacyMessage, skillMessage, startTask } from './a2a.js';
import { type Agent, launch } from './harness.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
type Json = Record<string, any>;

/** The mistakes a newcomer makes first, each answered with what to do instead (issue 15). */
describe('errors that say what to do', () => {
  let agent: Agent;
  let taskId: string;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme' } });
    taskId = (await startTask(agent, skillMessage('export', { rows: 1 }))).id;
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** A raw HTTP call as alice (or as `who`); the reply's status and parsed body. */
  const call = async (
    method: string,
    path: string,
    o: { body?: unknown; headers?: Record<string, string>; who?: Record<string, string> } = {},
  ): Promise<{ status: number; body: Json; headers: Headers }> => {
    const res = await fetch(`${agent.url}${path}`, {
      method,
      headers: {
        ...(o.who ?? agent.credentials),
        ...(o.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...o.headers,
      },
      body: typeof o.body === 'string' || o.body === undefined ? o.body : JSON.stringify(o.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
  const rpc = (method: string, params: unknown, headers: Record<string, string> = {}, id: unknown = 1) =>
    call('POST', '/', { body: { jsonrpc: '2.0', id, method, params }, headers });

  describe('the protocol version', () => {
    it('regression: SendMessage without A2A-Version says to send A2A-Version: 1.0, message/send with it the reverse', async () => {
      const message = skillMessage('export', { rows: 1 });
      const v1WithoutHeader = await rpc('SendMessage', { message }, {}, 'first-try');
      expect(v1WithoutHeader.body.id).toBe('first-try');
      expect(v1WithoutHeader.body.error.code).toBe(-32601);
      expect(v1WithoutHeader.body.error.message).toContain('SendMessage is a v1.0 method');
      expect(v1WithoutHeader.body.error.message).toContain('A2A-Version: 1.0');
      expect(v1WithoutHeader.body.error.message).toContain('message/send');

      const legacy = { message: legacyMessage([{ kind: 'text', text: 'export 1 row' }]) };
      const v03WithHeader = await rpc('message/send', legacy, { 'A2A-Version': '1.0' });
      expect(v03WithHeader.body.error.code).toBe(-32601);
      expect(v03WithHeader.body.error.message).toContain('message/send is a v0.3 method');
      expect(v03WithHeader.body.error.message).toContain('no A2A-Version header');
      expect(v03WithHeader.body.error.message).toContain('SendMessage');

      const list = await rpc('ListTasks', {});
      expect(list.body.error.message).toContain('v0.3 has no such method');
      // A method neither version has stays a plain MethodNotFound.
      const unknown = await rpc('Teleport', {}, { 'A2A-Version': '1.0' });
      expect(unknown.body.error.code).toBe(-32601);
      expect(unknown.body.error.message).not.toContain('v0.3');
    });

    it('A2A-Version is Major.Minor, a patch number ignored; anything else is VersionNotSupported naming 1.0 and 0.3', async () => {
      for (const v of ['1.0', '1.0.0', '1.0.7', ' 1.0 ']) {
        const r = await rpc('GetTask', { id: taskId }, { 'A2A-Version': v });
        expect(r.body.result?.id, v).toBe(taskId);
      }
      for (const v of ['0.3', '0.3.0', '0.3.2']) {
        const r = await rpc('tasks/get', { id: taskId }, { 'A2A-Version': v });
        expect(r.body.result?.id, v).toBe(taskId);
      }
      for (const v of ['1', '2.0', '1.1', '0.2', 'v1.0', 'latest']) {
        const r = await rpc('GetTask', { id: taskId }, { 'A2A-Version': v }, `asked-${v}`);
        expect(r.body.id, v).toBe(`asked-${v}`);
        expect(r.body.error.code, v).toBe(-32009);
        expect(r.body.error.message, v).toContain('send A2A-Version: 1.0');
        expect(r.body.error.data[0]).toMatchObject({
          reason: 'VERSION_NOT_SUPPORTED',
          metadata: { supportedVersions: '1.0,0.3' },
        });
      }
      expect((await rpc('GetTask', { id: taskId }, { 'A2A-Version': '1' })).body.error.message).toContain(
        'not a Major.Minor version',
      );
      const rest = await call('GET', `/rest/tasks/${taskId}`, { headers: { 'A2A-Version': '1' } });
      expect(rest.status).toBe(400);
      expect(rest.body.error.details[0].reason).toBe('VERSION_NOT_SUPPORTED');
      expect(rest.body.error.message).toContain('send A2A-Version: 1.0');
      const restPatch = await call('GET', `/rest/tasks/${taskId}`, { headers: { 'A2A-Version': '1.0.1' } });
      expect(restPatch.body.id).toBe(taskId);
    });

    it('a REST path of no route says where each version’s routes are', async () => {
      const noneV03 = await call('GET', '/rest/v1/nothing-here');
      expect(noneV03.status).toBe(404);
      expect(noneV03.body.code).toBe(-32601);
      expect(noneV03.body.message).toContain('POST /rest/v1/message:send');
      const v1 = await call('GET', '/rest/nothing-here', { headers: { 'A2A-Version': '1.0' } });
      expect(v1.status).toBe(404);
      expect(v1.body.error.message).toContain('POST /rest/message:send');
    });
  });

  describe('a message in another version’s shape', () => {
    /** The v0.3 JSON-RPC params a newcomer copies from the README. */
    const v03Params = () => ({ message: legacyMessage([{ kind: 'text', text: 'export 2 rows' }]) });
    const countTasks = async () =>
      (await rpc('ListTasks', { pageSize: 100 }, { 'A2A-Version': '1.0' })).body.result.tasks?.length ?? 0;

    it('regression: v0.3 JSON-RPC params on /rest/v1 are named as such, not "Invalid role: -1"', async () => {
      const r = await call('POST', '/rest/v1/message:send', { body: v03Params() });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe(-32602);
      expect(r.body.message).toContain('looks like an A2A v0.3 JSON-RPC message');
      expect(r.body.message).toContain('"content": [{"text": "hi"}]');
      expect(r.body.message).toContain('message/send');
      expect(r.body.message).not.toContain('-1');
    });

    it('regression: a v0.3 message on v1.0 is refused, not stored with role UNRECOGNIZED', async () => {
      const before = await countTasks();
      const rest = await call('POST', '/rest/message:send', {
        body: v03Params(),
        headers: { 'A2A-Version': '1.0' },
      });
      expect(rest.status).toBe(400);
      expect(rest.body.error.message).toContain('looks like an A2A v0.3 JSON-RPC message (role "user"');
      expect(rest.body.error.message).toContain('"role": "ROLE_USER"');
      const jsonrpc = await rpc('SendMessage', v03Params(), { 'A2A-Version': '1.0' });
      expect(jsonrpc.body.error.code).toBe(-32602);
      expect(jsonrpc.body.error.message).toContain('with no A2A-Version header');
      const unknownRole = await rpc(
        'SendMessage',
        { message: { ...skillMessage('export', { rows: 1 }), role: 'banana' } },
        { 'A2A-Version': '1.0' },
      );
      expect(unknownRole.body.error.message).toContain('message.role must be "ROLE_USER" or "ROLE_AGENT"');
      expect(await countTasks()).toBe(before);
    });

    it('a v1.0 message on v0.3 (JSON-RPC or /rest/v1) says to send A2A-Version: 1.0', async () => {
      const message = {
        messageId: crypto.randomUUID(),
        role: 'ROLE_USER',
        parts: [{ text: 'export 1 row' }],
      };
      const jsonrpc = await rpc('message/send', { message });
      expect(jsonrpc.body.error.code).toBe(-32602);
      expect(jsonrpc.body.error.message).toContain('looks like an A2A v1.0 message');
      expect(jsonrpc.body.error.message).toContain('A2A-Version: 1.0');
      const rest = await call('POST', '/rest/v1/message:send', { body: { message } });
      expect(rest.status).toBe(400);
      expect(rest.body.message).toContain('POST /rest/message:send');
    });

    it('a v0.3 HTTP+JSON body on the v1.0 route points to /rest/v1', async () => {
      const message = { messageId: crypto.randomUUID(), role: 'ROLE_USER', content: [{ text: 'hi' }] };
      const r = await call('POST', '/rest/message:send', {
        body: { message },
        headers: { 'A2A-Version': '1.0' },
      });
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain('POST it to /rest/v1/message:send');
    });
  });

  describe('JSON-RPC refusals before the body carry its id', () => {
    const anonymous = {};
    const post = (body: string, headers: Record<string, string> = {}) =>
      call('POST', '/', { body, who: anonymous, headers: { 'A2A-Version': '1.0', ...headers } });
    const getTask = (id: unknown, extra = '') =>
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"GetTask","params":{"id":"x"${extra}}}`;

    it('regression: a 401 answers with the request id (string or number), not null', async () => {
      for (const id of ['needs-a-key', 42]) {
        const r = await post(getTask(id));
        expect(r.status).toBe(401);
        expect(r.headers.get('www-authenticate')).toBeTruthy();
        expect(r.body).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32050 } });
      }
    });

    it('an id that cannot be read (not JSON, an invalid id, a body past 16 KiB) is null', async () => {
      expect((await post('{"jsonrpc": "2.0", "id": 5, ')).body.id).toBeNull();
      expect((await post(getTask({ x: 1 }))).body.id).toBeNull();
      const large = await post(getTask(7, `,"pad":"${'x'.repeat(17 * 1024)}"`));
      expect(large.status).toBe(401);
      expect(large.body.id).toBeNull();
    });

    it('a wrong Content-Type and an unsupported version carry the id too', async () => {
      const type = await call('POST', '/', {
        body: getTask('typed'),
        headers: { 'Content-Type': 'text/plain' },
      });
      expect(type.body).toMatchObject({ id: 'typed', error: { code: -32005 } });
      const version = await post(getTask('versioned'), { 'A2A-Version': '9.9' });
      expect(version.body).toMatchObject({ id: 'versioned', error: { code: -32009 } });
    });
  });

  describe('GET / points to the card, the endpoints and the docs', () => {
    it('as JSON by default, whoever asks (no credentials needed)', async () => {
      const r = await call('GET', '/', { who: {} });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        name: 'taskhandle',
        agentCard: '/.well-known/agent-card.json',
        jobs: '/v1/jobs',
        inbox: '/inbox',
        console: '/console',
        a2a: { jsonrpc: { url: '/', method: 'POST' } },
      });
      expect(r.body.docs).toMatch(/^https:\/\//);
      expect((await call('GET', r.body.agentCard, { who: {} })).status).toBe(200);
      expect((await call('GET', r.body.jobsOpenApi, { who: {} })).status).toBe(200);
      const odd = await call('GET', '/', { who: {}, headers: { Accept: 'image/png' } });
      expect(odd.status).toBe(200);
      expect(odd.body.agentCard).toBe('/.well-known/agent-card.json');
    });

    it('as a page of links for a browser', async () => {
      const res = await fetch(`${agent.url}/`, { headers: { Accept: 'text/html,application/xhtml+xml' } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      const html = await res.text();
      expect(html).toContain('href="/.well-known/agent-card.json"');
      expect(html).toContain('href="/inbox"');
    });
  });

  describe('/v1/jobs says "job"', () => {
    it('regression: /v1/jobs/nope is "Job nope not found" on every route', async () => {
      const routes: [string, string][] = [
        ['GET', '/v1/jobs/nope'],
        ['GET', '/v1/jobs/nope/result'],
        ['GET', '/v1/jobs/nope/events'],
        ['GET', '/v1/jobs/nope/artifacts/a1'],
        ['DELETE', '/v1/jobs/nope'],
        ['POST', '/v1/jobs/nope:cancel'],
      ];
      for (const [method, path] of routes) {
        const r = await call(method, path);
        expect(r.status, path).toBe(404);
        expect(r.body.detail, path).toBe('Job nope not found');
      }
    });

    it('an artifact a job does not have, and a path of no route, are said in jobs’ words', async () => {
      const artifact = await call('GET', `/v1/jobs/${taskId}/artifacts/nope`);
      expect(artifact.status).toBe(404);
      expect(artifact.body.detail).toMatch(/^Job .* has no artifact nope$/);
      const route = await call('GET', '/v1/jobs/x/y/z');
      expect(route.status).toBe(404);
      expect(route.body.detail).toContain('/v1/openapi.json');
    });
  });

  it('a loopback webhook refusal names PUSH_ALLOW and the value that would allow it', async () => {
    for (const [url, setting] of [
      ['http://127.0.0.1:9/hook', 'PUSH_ALLOW=127.0.0.1'],
      ['http://localhost:8080/hook', 'PUSH_ALLOW=localhost'],
    ]) {
      const r = await rpc('CreateTaskPushNotificationConfig', { taskId, url }, { 'A2A-Version': '1.0' });
      expect(r.body.error.code, url).toBe(-32602);
      expect(r.body.error.message, url).toContain(`start the server with ${setting}`);
    }
    const metadata = await rpc(
      'CreateTaskPushNotificationConfig',
      { taskId, url: 'http://169.254.169.254/latest' },
      { 'A2A-Version': '1.0' },
    );
    expect(metadata.body.error.message).not.toContain('PUSH_ALLOW');
  });
});
