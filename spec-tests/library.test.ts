import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
// The package's entry as users import it (`from 'taskhandle'`), built.
import { ConfigError, createServer, defineSkill, JobError, type TaskServer } from '../dist/src/index.js';
import { tempDbPath } from './harness.js';

const report = defineSkill({
  id: 'report',
  description: 'Builds the report of a month',
  input: z.object({ month: z.string() }),
  pollIntervalMs: 500,
  ttlMs: 3_600_000,
  onInterrupt: 'rerun',
  async run(ctx) {
    if (ctx.input.month === 'never') throw new JobError('there is no month "never"');
    await ctx.progress({ percent: 50, message: 'counting' });
    return { message: `Report for ${ctx.input.month}` };
  },
});

/** What every server of these tests shares: its own database, quiet logs, no environment. */
const base = () => ({ database: `sqlite:${tempDbPath()}` as const, logLevel: 'silent' as const, env: {} });

const open: TaskServer[] = [];
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

async function started(options: Parameters<typeof createServer>[0]): Promise<TaskServer> {
  const server = await createServer(options);
  open.push(server);
  return server;
}

const rpc = async (url: string, method: string, params: unknown) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: answers are inspected freely in tests
  return res.json() as Promise<{ result?: Record<string, any>; error?: { code: number; message: string } }>;
};

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected freely in tests
const json = async (url: string): Promise<any> => (await fetch(url)).json();

const send = (url: string, month: string) =>
  rpc(url, 'SendMessage', {
    message: {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER',
      parts: [{ data: { skill: 'report', input: { month } } }],
    },
    configuration: { returnImmediately: false },
  });

describe('createServer', () => {
  it('serves the skills it is given, alone with builtinSkills: false, and says where each came from', async () => {
    const server = await started({ ...base(), port: 0, skills: [report], builtinSkills: false });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.skills).toEqual([{ id: 'report', from: 'createServer' }]);
    const done = await send(`${server.url}/`, '2026-11');
    expect(done.result?.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.result?.task.status.message.parts[0].text).toBe('Report for 2026-11');
    // A JobError's message is the caller's to read.
    const failed = await send(`${server.url}/`, 'never');
    expect(failed.result?.task.status.message.parts[0].text).toContain('there is no month "never"');
  });

  it('keeps the built-ins beside given skills by default, or the ones builtinSkills names', async () => {
    const all = await started({ ...base(), port: 0, skills: [report] });
    expect(all.skills.map((s) => s.id)).toEqual(['export', 'sleep', 'approval', 'batch', 'report']);
    const some = await started({ ...base(), port: 0, skills: [report], builtinSkills: ['sleep'] });
    expect(some.skills.map((s) => s.id)).toEqual(['sleep', 'report']);
  });

  it('reads what the options leave out from env, and an option wins over the environment', async () => {
    const server = await started({
      ...base(),
      env: { PORT: '0', PUBLIC_URL: 'http://agent.example:1234', MAX_TTL_MS: '5000' },
      publicUrl: 'http://127.0.0.1:9',
    });
    expect(server.url).toBe('http://127.0.0.1:9');
    const card = await json(`http://127.0.0.1:${server.port}/.well-known/agent-card.json`);
    expect(card.supportedInterfaces[0].url).toBe('http://127.0.0.1:9/');
  });

  it('refuses a bad option before anything opens, naming the option as written', async () => {
    const refusal = (o: Record<string, unknown>) =>
      createServer({ ...base(), ...o }).then(
        () => expect.unreachable('it started'),
        (err: Error) => {
          expect(err).toBeInstanceOf(ConfigError);
          return err.message;
        },
      );
    expect(await refusal({ prot: 0 })).toContain('unknown option "prot" (did you mean "port"?)');
    expect(await refusal({ port: 70_000 })).toContain('port=70000: must be at most 65535');
    expect(await refusal({ allowAnonymous: 'yes' })).toContain('allowAnonymous="yes": must be true or false');
    expect(await refusal({ operators: { alice: true } })).toContain(
      'operators={"alice":true}: must be an array',
    );
    expect(await refusal({ builtinSkills: ['exprt'] })).toContain(
      'builtinSkills=["exprt"]: no built-in skill "exprt" (did you mean "export"?)',
    );
    expect(await refusal({ skills: [{ ...report, ttlMs: -1 }] })).toContain(
      'createServer: skills[0] is not a valid skill: ttlMs must be more than 0',
    );
    expect(await refusal({ skills: [{ ...report, id: 'export' }] })).toContain(
      `skill "export" is defined twice: by the built-in skills and by createServer's skills[0]`,
    );
  });

  it('a start refused after the store opened lets the store and the port go (a bad card template)', async () => {
    const { database } = base();
    await expect(
      createServer({ ...base(), database, port: 0, agentCardFile: '/nonexistent/card.json' }),
    ).rejects.toBeInstanceOf(ConfigError);
    const next = await started({ ...base(), database, port: 0 });
    expect((await fetch(`${next.url}/healthz`)).status).toBe(200);
  });

  it('close() is the ordered stop, the same promise every time, and leaves the store free', async () => {
    const { database } = base();
    const first = await createServer({ ...base(), database, port: 0 });
    const closing = first.close();
    expect(first.close()).toBe(closing);
    await closing;
    // A SQLite store serves one server at a time: a second start on it proves the first let it go.
    const second = await started({ ...base(), database, port: 0 });
    expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
  });
});

describe('createServer({ listen: false }): every face mounted in an app of yours', () => {
  const listening = (server: Server) =>
    new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
      ),
    );
  const apps: Server[] = [];
  afterAll(() => {
    for (const app of apps) app.close();
  });

  it('in express under a path: A2A, /v1/jobs and the card answer there, with their URLs', async () => {
    const app = express();
    const outer = createHttpServer(app);
    apps.push(outer);
    const url = await listening(outer);
    const server = await started({
      ...base(),
      listen: false,
      publicUrl: `${url}/agent`,
      allowAnonymous: true,
      skills: [report],
      builtinSkills: false,
    });
    expect(server.port).toBeUndefined();
    app.get('/hello', (_req, res) => {
      res.send('the app of yours');
    });
    app.use('/agent', server.handler);
    expect(await (await fetch(`${url}/hello`)).text()).toBe('the app of yours');
    const card = await json(`${url}/agent/.well-known/agent-card.json`);
    expect(card.supportedInterfaces[0].url).toBe(`${url}/agent/`);
    const done = await send(`${url}/agent/`, '2026-10');
    expect(done.result?.task.status.state).toBe('TASK_STATE_COMPLETED');
    const created = await fetch(`${url}/agent/v1/jobs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ skill: 'report', input: { month: '2026-09' } }),
    });
    expect(created.status).toBe(202);
    // Every link a job gives leads back under the mount: its Location, its result, a redirect.
    const location = created.headers.get('location') ?? '';
    expect(location).toMatch(/^\/agent\/v1\/jobs\/[^/]+$/);
    let job = await json(`${url}${location}`);
    for (let i = 0; job.status !== 'completed' && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 20));
      job = await json(`${url}${location}`);
    }
    expect(job.result).toBe(`${location}/result`);
    // The reply is the result: written as the artifact "reply".
    expect(await json(`${url}${job.result}`)).toMatchObject({
      artifacts: [{ artifactId: 'reply', parts: [{ text: 'Report for 2026-09' }] }],
    });
    // The browser pages link their own files under the mount too.
    const page = await (await fetch(`${url}/agent/inbox`)).text();
    expect(page).toContain('href="/agent/inbox/inbox.css"');
    expect((await fetch(`${url}/agent/inbox/inbox.js`)).status).toBe(200);
    expect(await (await fetch(`${url}/agent/console`)).text()).toContain('src="/agent/console/console.js"');
  });

  it('in node:http at its root', async () => {
    const outer = createHttpServer((req, res) => server.handler(req, res));
    apps.push(outer);
    const url = await listening(outer);
    const server = await started({ ...base(), listen: false, publicUrl: url, allowAnonymous: true });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const listed = await rpc(`${url}/`, 'ListTasks', {});
    expect(listed.result?.tasks).toEqual([]);
    // Once closed, the app's requests are turned away (503), not failed on a closed store.
    await server.close();
    const after = await fetch(`${url}/v1/jobs`);
    expect(after.status).toBe(503);
    expect(after.headers.get('retry-after')).toBe('1');
    expect(((await after.json()) as { detail: string }).detail).toContain('taskhandle is stopping');
  });

  it('needs publicUrl, and credentials or allowAnonymous: it cannot see who reaches the app', async () => {
    await expect(createServer({ ...base(), listen: false })).rejects.toThrow(/set publicUrl/);
    await expect(
      createServer({ ...base(), listen: false, publicUrl: 'http://127.0.0.1:3000' }),
    ).rejects.toThrow(/anonymous callers are served only with allowAnonymous: true/);
  });
});
