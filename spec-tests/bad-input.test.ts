import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, send, skillMessage, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';

const MAX_BODY_BYTES = 2048;

describe('bad input', () => {
  let agent: Agent;
  let before: { id: string };
  beforeAll(async () => {
    // As a principal: the 413 test counts tasks with ListTasks, which needs an identity.
    agent = await launch({ apiKeys: { alice: 'acme' }, env: { MAX_BODY_BYTES: String(MAX_BODY_BYTES) } });
    before = (await send(agent, skillMessage('export', { rows: 2 }))).task;
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** Posts a raw JSON-RPC body (with alice's credentials); returns the HTTP status and the parsed reply. */
  const post = async (body: string, headers: Record<string, string> = {}, path = '/') => {
    const res = await fetch(`${agent.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...agent.credentials, ...headers },
      body,
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
  };

  for (const [name, headers] of [
    ['v1.0', { 'A2A-Version': '1.0' }],
    ['v0.3', {}],
  ] as const) {
    describe(`JSON-RPC ${name}`, () => {
      it('malformed JSON -> -32700 with id null', async () => {
        for (const body of ['{"jsonrpc": "2.0", "method": ', '', 'not json']) {
          const r = await post(body, headers);
          expect(r.status).toBe(200);
          expect(r.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
        }
      });

      it('an invalid request -> -32600', async () => {
        const cases: [unknown, string | number | null][] = [
          [{ jsonrpc: '1.0', id: 1, method: 'GetTask', params: {} }, 1],
          [{ jsonrpc: '2.0', id: 2, params: {} }, 2],
          [{ jsonrpc: '2.0', id: 3, method: '', params: {} }, 3],
          [{ jsonrpc: '2.0', id: { x: 1 }, method: 'GetTask', params: {} }, null],
          [{ jsonrpc: '2.0', id: 1.5, method: 'GetTask', params: {} }, null],
          [[{ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: before.id } }], null],
          [42, null],
          ['a string', null],
        ];
        for (const [request, id] of cases) {
          const r = await post(JSON.stringify(request), headers);
          expect(r.body.error?.code, JSON.stringify(request)).toBe(-32600);
          expect(r.body.id, JSON.stringify(request)).toBe(id);
        }
      });

      it('an unknown method -> -32601, with or without params', async () => {
        for (const request of [
          { jsonrpc: '2.0', id: 'u1', method: 'tasks/teleport', params: {} },
          { jsonrpc: '2.0', id: 'u2', method: 'Teleport' },
        ]) {
          const r = await post(JSON.stringify(request), headers);
          expect(r.body.error?.code, JSON.stringify(request)).toBe(-32601);
          expect(r.body.id).toBe(request.id);
        }
      });

      it('bad params -> -32602', async () => {
        const get = name === 'v1.0' ? 'GetTask' : 'tasks/get';
        const sendMethod = name === 'v1.0' ? 'SendMessage' : 'message/send';
        for (const request of [
          { jsonrpc: '2.0', id: 1, method: get, params: 'x' },
          { jsonrpc: '2.0', id: 1, method: get, params: [before.id] },
          { jsonrpc: '2.0', id: 1, method: get, params: null },
          { jsonrpc: '2.0', id: 1, method: get, params: {} },
          { jsonrpc: '2.0', id: 1, method: get },
          { jsonrpc: '2.0', id: 1, method: sendMethod, params: {} },
        ]) {
          const r = await post(JSON.stringify(request), headers);
          expect(r.body.error?.code, JSON.stringify(request)).toBe(-32602);
        }
      });

      it('a wrong Content-Type -> -32005 (ContentTypeNotSupported)', async () => {
        const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: {} }), {
          ...headers,
          'Content-Type': 'text/plain',
        });
        expect(r.body.error.code).toBe(-32005);
      });
    });
  }

  it('a method of the other protocol version is unknown: the A2A-Version header picks the version', async () => {
    const v1Method = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: before.id } }),
    );
    expect(v1Method.body.error.code).toBe(-32601);
    const v03Method = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: before.id } }),
      { 'A2A-Version': '1.0' },
    );
    expect(v03Method.body.error.code).toBe(-32601);
  });

  it('a webhook that would reach a private address is invalid params naming the reason, on every face', async () => {
    const hooks = [
      'http://127.0.0.1:9/hook',
      'http://[::ffff:10.0.0.1]/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://localhost/hook',
      'ftp://example.com/hook',
    ];
    for (const url of hooks) {
      const { body } = await agent.rpc(
        'CreateTaskPushNotificationConfig',
        { taskId: before.id, url },
        { version: '1.0' },
      );
      expect(body.error?.code, url).toBe(-32602);
      expect(body.error?.message, url).toMatch(/url .*(address|http|refused|name)/i);
    }
    const legacy = await agent.rpc(
      'tasks/pushNotificationConfig/set',
      { taskId: before.id, pushNotificationConfig: { url: 'http://192.168.1.1/hook' } },
      { version: '0.3' },
    );
    expect(legacy.body.error?.code).toBe(-32602);
    expect(legacy.body.error?.message).toContain('192.168.1.1 is a private address');
    const rest = await fetch(`${agent.url}/rest/tasks/${before.id}/pushNotificationConfigs`, {
      method: 'POST',
      headers: { 'A2A-Version': '1.0', 'Content-Type': 'application/json', ...agent.credentials },
      body: JSON.stringify({ url: 'http://100.64.0.1/hook' }),
    });
    expect(rest.status).toBe(400);
    expect(JSON.stringify(await rest.json())).toContain('100.64.0.1 is a carrier-grade NAT');
    const send = await agent.rpc(
      'SendMessage',
      {
        message: { messageId: 'inline-bad-hook', role: 'ROLE_USER', parts: [{ text: 'x' }] },
        configuration: { taskPushNotificationConfig: { url: 'http://10.1.2.3/hook' } },
      },
      { version: '1.0' },
    );
    expect(send.body.error?.code).toBe(-32602);
    const list = await agent.rpc(
      'ListTaskPushNotificationConfigs',
      { taskId: before.id },
      { version: '1.0' },
    );
    expect(list.body.result).toEqual({}); // nothing registered (v1.0 JSON leaves out empty lists)
  });

  it('A2A-Version may come as a request parameter instead of a header (spec 3.6.1)', async () => {
    const getTask = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: before.id } });
    const v1 = await post(getTask, {}, '/?A2A-Version=1.0');
    expect(v1.body.result?.id).toBe(before.id);
    const unsupported = await post(getTask, {}, '/?A2A-Version=2.0');
    expect(unsupported.body.error.code).toBe(-32009);
    const rest = await fetch(`${agent.url}/rest/tasks/${before.id}?A2A-Version=2.0`, {
      headers: agent.credentials,
    });
    expect(rest.status).toBe(400);
  });

  it('an unsupported A2A-Version -> -32009 (JSON-RPC) and 400 VERSION_NOT_SUPPORTED (REST)', async () => {
    const r = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: before.id } }),
      {
        'A2A-Version': '2.0',
      },
    );
    expect(r.body.error.code).toBe(-32009);
    const rest = await fetch(`${agent.url}/rest/tasks/${before.id}`, {
      headers: { 'A2A-Version': '2.0', ...agent.credentials },
    });
    expect(rest.status).toBe(400);
    const reply = (await rest.json()) as { error: { details: { reason: string }[] } };
    expect(reply.error.details[0]?.reason).toBe('VERSION_NOT_SUPPORTED');
  });

  // A caller may hang up mid-body as often as it likes: that is its doing, not an error of ours to
  // log (an error line per request would let anyone flood the operators' logs).
  it('a caller that hangs up mid-body leaves no error in the log, on JSON-RPC and REST', async () => {
    const { port } = new URL(agent.url);
    const hangUp = (path: string) =>
      new Promise<void>((resolve) => {
        const req = request({
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Length': '500', ...agent.credentials },
        });
        req.on('error', () => resolve());
        req.write('{"jsonrpc":"2.0","id":1,');
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 50);
      });
    const errorsBefore = agent.logs.filter((l) => (l.level as number) >= 50).length;
    for (const path of ['/', '/rest/message:send', '/v1/jobs']) await hangUp(path);
    // The server goes on answering, and logged no error for any of them.
    expect((await getTask(agent, before.id)).id).toBe(before.id);
    await new Promise((r) => setTimeout(r, 100));
    expect(agent.logs.filter((l) => (l.level as number) >= 50).slice(errorsBefore)).toEqual([]);
  });

  it('a body over MAX_BODY_BYTES -> 413 on JSON-RPC and REST, sized or chunked', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'big', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(3000) }] } },
    });
    const rpc = await post(big, { 'A2A-Version': '1.0' });
    expect(rpc.status).toBe(413);
    expect(rpc.body.error.code).toBe(-32600);
    const rest = await post(
      JSON.stringify(JSON.parse(big).params),
      { 'A2A-Version': '1.0' },
      '/rest/message:send',
    );
    expect(rest.status).toBe(413);
    const legacyRest = await post(
      JSON.stringify({ message: { text: 'x'.repeat(3000) } }),
      {},
      '/rest/v1/message:send',
    );
    expect(legacyRest.status).toBe(413);

    // Without Content-Length (chunked), the limit is enforced while reading.
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    const res = await fetch(`${agent.url}/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...agent.credentials },
      body: chunked,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);

    // Nothing of the refused message was taken in.
    const { body } = await agent.rpc('ListTasks', {}, V1);
    expect(body.result.totalSize).toBe(1);
  });

  it('a body just under the limit is served', async () => {
    const message = skillMessage('export', { rows: 1 });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message } });
    const padded = body.replace('"rows":1', `"rows":1${' '.repeat(MAX_BODY_BYTES - body.length - 10)}`);
    expect(Buffer.byteLength(padded)).toBeLessThan(MAX_BODY_BYTES);
    const r = await post(padded, { 'A2A-Version': '1.0' });
    expect(r.status).toBe(200);
    expect(r.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  /**
   * A raw request with alice's credentials (node:http: fetch sends no body with GET): the HTTP
   * status, the Content-Type and the parsed body.
   */
  const call = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    // biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
    new Promise<{ status: number; type: string; connection: string; body: any }>((resolve, reject) => {
      // Node sends a GET's body unframed unless told its length.
      const length = body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) };
      const req = request(`${agent.url}${path}`, {
        method,
        headers: { 'Content-Type': 'application/json', ...length, ...agent.credentials, ...headers },
      });
      req.on('error', reject);
      req.on('response', async (res) => {
        let text = '';
        for await (const chunk of res) text += chunk;
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? ''),
          connection: String(res.headers.connection ?? ''),
          body: JSON.parse(text),
        });
      });
      req.end(body);
    });
  const taskCount = async () => (await agent.rpc('ListTasks', {}, V1)).body.result.totalSize as number;

  it("a bad %-escape in a path segment is a 400 in the face's shape (it was a 500: the handler dropped the 400 Express had marked)", async () => {
    const jobs = await call('GET', '/v1/jobs/%E0%A4%A');
    expect(jobs.status).toBe(400);
    expect(jobs.type).toMatch(/^application\/problem\+json/);
    expect(jobs.body).toMatchObject({ status: 400, detail: expect.stringContaining('%-escape') });
    for (const path of ['/rest/tasks/%ZZ', '/rest/acme/tasks/%ZZ']) {
      const rest = await call('GET', path, undefined, { 'A2A-Version': '1.0' });
      expect(rest.status, path).toBe(400);
      expect(rest.body.error, path).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
      expect(rest.body.error.message, path).toContain('%-escape');
    }
    const legacy = await call('GET', '/rest/v1/tasks/%');
    expect(legacy.status).toBe(400);
    expect(legacy.body).toEqual({ code: -32602, message: expect.stringContaining('%-escape') });
    const inbox = await call('POST', '/inbox/api/tasks/%E0%A4%A/answer', '{"text":"yes"}');
    expect(inbox.status).toBe(400);
    expect(inbox.body.detail).toContain('%-escape');
  });

  it("a tenant-prefixed REST send whose body is not an object is a 400 (it was a 500: a TypeError in the SDK's tenant middleware)", async () => {
    for (const body of ['true', '[1]', '5', '"x"']) {
      const r = await call('POST', '/rest/acme/message:send', body, { 'A2A-Version': '1.0' });
      expect(r.status, body).toBe(400);
      expect(r.body.error.message, body).toBe('The body must be a JSON object');
    }
  });

  it('a body on GET or DELETE over the body limit is a 413 on every face (it was a 500)', async () => {
    const big = 'x'.repeat(MAX_BODY_BYTES + 1);
    const cases: [string, string, Record<string, string>][] = [
      ['GET', '/v1/jobs', {}],
      ['DELETE', `/v1/jobs/${before.id}`, {}],
      ['GET', '/inbox/api/waiting', {}],
      ['DELETE', '/rest/tasks/x/pushNotificationConfigs/y', { 'A2A-Version': '1.0' }],
      ['GET', `/rest/v1/tasks/${before.id}`, {}],
    ];
    for (const [method, path, headers] of cases) {
      const r = await call(method, path, big, headers);
      expect(r.status, `${method} ${path}`).toBe(413);
      expect(JSON.stringify(r.body), path).toContain(`limit of ${MAX_BODY_BYTES} bytes`);
    }
  });

  it('a body refused unread closes the connection on /v1/jobs too, as on every other face', async () => {
    const big = JSON.stringify({ skill: 'export', input: { rows: 1 }, pad: 'x'.repeat(MAX_BODY_BYTES) });
    const r = await call('POST', '/v1/jobs', big);
    expect(r.status).toBe(413);
    // Its unread bytes must not be taken for the next request on a kept-alive connection.
    expect(r.connection).toBe('close');
  });

  it('a compressed body (gzip garbage, br, an unknown coding) is a 415 on every face (it was a 500)', async () => {
    for (const coding of ['gzip', 'br', 'x-unknown']) {
      const h = { 'Content-Encoding': coding };
      const rpc = await call('POST', '/', 'garbage', { ...h, 'A2A-Version': '1.0' });
      expect(rpc.status, coding).toBe(415);
      expect(rpc.body.error).toMatchObject({
        code: -32600,
        message: expect.stringContaining('uncompressed'),
      });
      const rest = await call('POST', '/rest/message:send', 'garbage', { ...h, 'A2A-Version': '1.0' });
      expect(rest.status, coding).toBe(415);
      expect(rest.body.error.message).toContain('uncompressed');
      const legacy = await call('POST', '/rest/v1/message:send', 'garbage', h);
      expect(legacy.status, coding).toBe(415);
      const jobs = await call('POST', '/v1/jobs', 'garbage', h);
      expect(jobs.status, coding).toBe(415);
      expect(jobs.type).toMatch(/^application\/problem\+json/);
      const inbox = await call('POST', `/inbox/api/tasks/${before.id}/answer`, 'garbage', h);
      expect(inbox.status, coding).toBe(415);
    }
  });

  it('SendMessage with "parts":[null] is InvalidParams naming the field (it was a 500 "Cannot read properties of null")', async () => {
    const message = { messageId: 'null-part', role: 'ROLE_USER', parts: [null] };
    const rpc = await agent.rpc('SendMessage', { message }, V1);
    expect(rpc.body.error).toEqual({
      code: -32602,
      message: 'Invalid params: message.parts[0] must be an object, not null',
    });
    const rest = await call('POST', '/rest/message:send', JSON.stringify({ message }), {
      'A2A-Version': '1.0',
    });
    expect(rest.status).toBe(400);
    expect(rest.body.error.message).toContain('message.parts[0] must be an object');
    // v0.3 REST: the SDK's decoder fails on the null; said in our words, not the JS message.
    const legacy = await call(
      'POST',
      '/rest/v1/message:send',
      JSON.stringify({ message: { messageId: 'null-part', role: 'ROLE_USER', content: [null] } }),
    );
    expect(legacy.status).toBe(400);
    expect(legacy.body).toEqual({ code: -32602, message: expect.stringMatching(/^Invalid params/) });
  });

  it('v0.3 tasks/pushNotificationConfig/set without its config is InvalidParams (it was a 500 with a JS message)', async () => {
    const r = await agent.rpc('tasks/pushNotificationConfig/set', { taskId: 'x' }, { version: '0.3' });
    expect(r.body.error).toEqual({
      code: -32602,
      message: 'Invalid params: pushNotificationConfig is required',
    });
  });

  it('v0.3 message/send with a contextId that is not a string is InvalidParams, and nothing is stored (it was a SQLite bind error, or 5 stored as "5.0")', async () => {
    const count = await taskCount();
    for (const contextId of [{}, true, [1], 5]) {
      const message = {
        kind: 'message',
        messageId: crypto.randomUUID(),
        role: 'user',
        contextId,
        parts: [{ kind: 'text', text: 'hi' }],
      };
      const r = await agent.rpc('message/send', { message }, { version: '0.3' });
      expect(r.status, JSON.stringify(contextId)).toBe(200);
      expect(r.body.error?.code, JSON.stringify(contextId)).toBe(-32602);
      expect(r.body.error.message).toMatch(/^Invalid params: message\.contextId must be a string, not /);
    }
    expect(await taskCount()).toBe(count);
  });

  it('JSON nested deeper than MAX_JSON_DEPTH is refused on every face before anything is stored (5,000 deep overflowed the stack when stored and hashed)', async () => {
    const count = await taskCount();
    const deep = `${'['.repeat(500)}${']'.repeat(500)}`;
    const send = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"deep","role":"ROLE_USER","parts":[{"text":"x"}]},"metadata":{"d":${deep}}}}`;
    const rpc = await call('POST', '/', send, { 'A2A-Version': '1.0' });
    expect(rpc.body.error).toEqual({
      code: -32600,
      message: 'The body nests deeper than 64 levels (MAX_JSON_DEPTH)',
    });
    const legacy = await call('POST', '/', send.replace('SendMessage', 'message/send'));
    expect(legacy.body.error.code).toBe(-32600);
    const rest = await call('POST', '/rest/message:send', `{"metadata":${deep}}`, { 'A2A-Version': '1.0' });
    expect(rest.status).toBe(400);
    expect(rest.body.error.message).toContain('MAX_JSON_DEPTH');
    const job = `{"skill":"export","input":{"rows":1,"x":${deep}}}`;
    for (const key of [{}, { 'Idempotency-Key': 'deep-1' }] as Record<string, string>[]) {
      const jobs = await call('POST', '/v1/jobs', job, key);
      expect(jobs.status).toBe(400);
      expect(jobs.body.detail).toContain('MAX_JSON_DEPTH');
    }
    const inbox = await call('POST', `/inbox/api/tasks/${before.id}/answer`, `{"text":${deep}}`);
    expect(inbox.status).toBe(400);
    expect(inbox.body.detail).toContain('MAX_JSON_DEPTH');
    expect(await taskCount()).toBe(count);
  });

  it('a request Node cannot parse (an unknown method) gets a problem document, not an empty 400', async () => {
    const { connect } = await import('node:net');
    const { port, hostname } = new URL(agent.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.end('FOO / HTTP/1.1\r\nHost: x\r\n\r\n'));
      let text = '';
      socket.on('data', (d) => {
        text += d.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('application/problem+json');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400 });
  });

  it('an HTTP/1.1 request without Host gets a 400 problem naming the header; HTTP/1.0 may omit it', async () => {
    const { connect } = await import('node:net');
    const { port, hostname } = new URL(agent.url);
    const raw = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => socket.end(head));
        let text = '';
        socket.on('data', (d) => {
          text += d.toString();
        });
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    const without = await raw('GET /healthz HTTP/1.1\r\n\r\n');
    expect(without).toMatch(/^HTTP\/1\.1 400 /);
    expect(without).toContain('application/problem+json');
    expect(JSON.parse(without.slice(without.indexOf('\r\n\r\n') + 4)).detail).toMatch(
      /must carry a Host header/,
    );
    expect(await raw('GET /healthz HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('after all that the server is healthy and has lost nothing', async () => {
    const health = await fetch(`${agent.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const task = await getTask(agent, before.id);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    const { task: fresh } = await send(agent, skillMessage('export', { rows: 1 }));
    expect(fresh.status.state).toBe('TASK_STATE_COMPLETED');
    const errors = agent.logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
    expect(errors).toEqual([]);
  });
});
