import { request } from 'node:http';
import { credentials, Client as GrpcClient, Metadata, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMessage, V1 } from './a2a.js';
import { GRPC, grpcInterface } from './grpc.js';
import { type Agent, launch } from './harness.js';

/** A request with the headers a browser sends (node's fetch would not send our Host): status and body. */
function call(
  agent: Agent,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const url = new URL(path, agent.url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          ...(body === undefined ? {} : { 'Content-Type': 'application/json', 'A2A-Version': '1.0' }),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
          // A stream that was admitted answers at once; its first bytes say enough.
          if (res.headers['content-type']?.startsWith('text/event-stream')) res.destroy();
        });
        res.on('close', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const rpc = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: 7, method, params });

describe('DNS rebinding: an anonymous server answers only requests that name it', () => {
  let agent: Agent;
  let port: string;
  let taskId = '';
  let artifactId = '';
  beforeAll(async () => {
    agent = await launch({ env: { ALLOWED_HOSTS: 'agent.internal', GRPC_PORT: '0' } });
    port = new URL(agent.url).port;
    const sent = await agent.rpc('SendMessage', { message: skillMessage('export', { rows: 2 }) }, V1);
    taskId = sent.body.result.task.id;
    const done = await agent.waitForState(taskId, 'TASK_STATE_COMPLETED');
    artifactId = done.artifacts[0].artifactId;
  });
  afterAll(() => agent.stop());

  // Every face a rebinding page could drive, as the browser would send it.
  const faces = (): [string, string, string, unknown?][] => [
    ['A2A JSON-RPC', 'POST', '/', rpc('SendMessage', { message: skillMessage('export', { rows: 1 }) })],
    ['A2A REST', 'GET', `/rest/tasks/${taskId}`],
    ['/v1/jobs create', 'POST', '/v1/jobs', { skill: 'export', input: { rows: 1 } }],
    ['/v1/jobs read', 'GET', `/v1/jobs/${taskId}`],
    ['artifact download', 'GET', `/v1/jobs/${taskId}/artifacts/${encodeURIComponent(artifactId)}`],
    ['SSE', 'GET', `/v1/jobs/${taskId}/events`],
    ['MCP', 'POST', '/mcp', rpc('tools/list', {})],
    ['inbox API', 'GET', '/inbox/api/waiting'],
    ['console API', 'GET', '/console/api/tasks'],
  ];

  it('refuses a foreign Host on every face with 403, naming ALLOWED_HOSTS', async () => {
    for (const [face, method, path, body] of faces()) {
      const { status, text } = await call(agent, method, path, { Host: `evil.example:${port}` }, body);
      expect(status, `${face}: ${text}`).toBe(403);
      expect(text, face).toContain('ALLOWED_HOSTS');
      expect(text, face).not.toContain('"tasks"');
    }
  });

  it('refuses a Host that only begins like an address of its own', async () => {
    for (const host of [`[::1]evil.example`, `[::1]evil.example:${port}`, `127.0.0.1.evil.example:${port}`]) {
      const { status, text } = await call(agent, 'GET', `/v1/jobs/${taskId}`, { Host: host });
      expect(status, `${host}: ${text}`).toBe(403);
    }
  });

  it("refuses a page of another site by its Origin, even with the server's own Host", async () => {
    for (const [face, method, path, body] of faces()) {
      const headers = { Host: `127.0.0.1:${port}`, Origin: `http://evil.example:${port}` };
      const { status } = await call(agent, method, path, headers, body);
      expect(status, face).toBe(403);
    }
  });

  it('serves its own names, IP addresses, loopback origins and the hosts ALLOWED_HOSTS lists', async () => {
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `agent.internal:${port}`,
      `[::1]:${port}`,
    ]) {
      for (const [face, method, path, body] of faces()) {
        // The console has a rule of its own: without credentials, the local user at a loopback name.
        if (face === 'console API' && host.startsWith('agent.internal')) continue;
        const { status, text } = await call(agent, method, path, { Host: host }, body);
        expect(status, `${face} as ${host}: ${text}`).toBeLessThan(300);
      }
    }
    const own = await call(agent, 'GET', `/v1/jobs/${taskId}`, { Origin: `http://localhost:${port}` });
    expect(own.status).toBe(200);
  });

  it("refuses a gRPC call whose :authority is another host's", async () => {
    const address = (await grpcInterface(agent))?.url ?? '';
    const getTask = (authority: string) =>
      new Promise<ServiceError | null>((resolve) => {
        const client = new GrpcClient(address, credentials.createInsecure(), {
          'grpc.default_authority': authority,
        });
        client.makeUnaryRequest(
          '/lf.a2a.v1.A2AService/GetTask',
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          new Metadata(),
          (err) => {
            client.close();
            resolve(err);
          },
        );
      });
    const foreign = await getTask(`evil.example:${new URL(`http://${address}`).port}`);
    expect(foreign?.code).toBe(GRPC.PERMISSION_DENIED);
    expect(foreign?.details).toContain('ALLOWED_HOSTS');
    const own = await getTask(address);
    expect(own?.code).not.toBe(GRPC.PERMISSION_DENIED);
  });
});

describe('DNS rebinding: a server that requires credentials', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme' } });
  });
  afterAll(() => agent.stop());

  it('serves any Host to a caller with credentials (a browser has none to lend a page) and refuses one without', async () => {
    const port = new URL(agent.url).port;
    const host = { Host: `agent.example.com:${port}` };
    const keyed = await call(agent, 'GET', '/v1/jobs', { ...host, ...agent.credentials });
    expect(keyed.status).toBe(200);
    const bare = await call(agent, 'GET', '/v1/jobs', host);
    expect(bare.status).toBe(401);
  });
});
