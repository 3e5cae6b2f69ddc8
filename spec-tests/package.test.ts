import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLE, skillMessage } from './a2a.js';
import { assertBuilt, makeProject, pack, run } from './package-project.js';
import { listeningUrl, type Served, ServedSet, serve } from './served.js';
import { openSse } from './sse.js';

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

/** What the tarball may hold: the compiled library (code and declarations), the pages' assets, the card. */
const SHIPPED = [
  /^dist\/src\/.+\.(js|d\.ts)$/,
  /^src\/faces\/[^/]+\/assets\/[^/]+$/,
  /^(package\.json|README\.md|LICENSE|agent-card\.json)$/,
];

const V1 = { 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
const rpc = async (url: string, method: string, params: unknown): Promise<Json> => {
  const res = await fetch(`${url}/`, {
    method: 'POST',
    headers: V1,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await res.json()) as Json;
};

/** GETs a job until its status is `status`; the last document is in the failure. */
async function jobUntil(url: string, location: string, status: string): Promise<Json> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const job = (await (await fetch(`${url}${location}`)).json()) as Json;
    if (job.status === status) return job;
    if (Date.now() > deadline) throw new Error(`${location} not ${status}: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const SCRIPT = 'a createServer script';
const BINARY = 'the installed binary (taskhandle serve --skills)';

describe('the package as a user installs it: npm pack, npm install in a fresh project', () => {
  let dir = '';
  let project = '';
  let files: string[] = [];
  const servers = new ServedSet();
  const timings: Record<string, number | string> = {};
  const server = (name: string): Served => servers.get(name);

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'taskhandle-package-'));
    project = join(dir, 'project');
    let started = Date.now();
    const packed = await pack(dir);
    timings.packMs = Date.now() - started;
    files = packed.files;
    const made = await makeProject(project, packed.tarball);
    Object.assign(timings, made);
    started = Date.now();
    // Only what a user's shell has: nothing of vitest's environment leaks into the servers.
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir };
    // Each is kept as soon as it listens: afterAll stops it even when the other fails to start.
    const { keep } = servers;
    await Promise.all([
      serve(process.execPath, ['serve.mjs', join(dir, 'script.db')], {
        cwd: project,
        env,
        urlOf: (line) => (line.skills && typeof line.url === 'string' ? line.url : undefined),
      }).then(keep(SCRIPT)),
      serve(join(project, 'node_modules/.bin/taskhandle'), ['serve', '--skills', './my-skills.mjs'], {
        cwd: project,
        env: {
          ...env,
          PORT: '0',
          HOST: '127.0.0.1',
          DATABASE_URL: `sqlite:${join(dir, 'binary.db')}`,
          BUILTIN_SKILLS: 'none',
          LOG_LEVEL: 'info',
        },
        urlOf: listeningUrl,
      }).then(keep(BINARY)),
    ]);
    timings.startMs = Date.now() - started;
  }, 300_000);

  afterAll(async () => {
    await servers.stopAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
    console.info(`package.test.ts timings: ${JSON.stringify(timings)}`);
  });

  it('the tarball holds the compiled library, the assets and the card, and nothing else', () => {
    const leaked = files.filter((f) => !SHIPPED.some((allowed) => allowed.test(f)));
    expect(leaked, `leaked: ${leaked.join(', ')}; the tarball holds:\n${files.join('\n')}`).toEqual([]);
    for (const needed of [
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/main.js',
      'agent-card.json',
      'LICENSE',
      'README.md',
      'src/faces/inbox/assets/inbox.js',
      'src/faces/console/assets/console.js',
      'src/faces/browser/assets/kit.js',
      'src/faces/browser/assets/kit.css',
    ])
      expect(files, `the tarball lacks ${needed}; it holds:\n${files.join('\n')}`).toContain(needed);
  });

  it("import('taskhandle') in the project gives the public API", async () => {
    const names = await run(
      process.execPath,
      ['-e', "import('taskhandle').then((m) => console.log(Object.keys(m).sort().join(',')))"],
      { cwd: project },
    );
    expect(names.trim()).toBe('ConfigError,JobError,createServer,defineRemoteSkill,defineSkill');
  });

  it("import('taskhandle/worker') in the project gives the worker client", async () => {
    const names = await run(
      process.execPath,
      ['-e', "import('taskhandle/worker').then((m) => console.log(Object.keys(m).sort().join(',')))"],
      { cwd: project },
    );
    expect(names.trim()).toBe('JobError,ProblemError,isProblemError,runWorker');
  });

  it('its types resolve under strict tsc (createServer, defineSkill, SkillContext, JobError)', async () => {
    const started = Date.now();
    await run(join(project, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: project });
    timings.tscMs = Date.now() - started;
  }, 120_000);

  it("the binary's startup line lists the module's skill, and the script's server its own", () => {
    expect(server(BINARY).line.skills).toEqual([{ id: 'tally', from: './my-skills.mjs' }]);
    expect(server(SCRIPT).line.skills).toEqual([{ id: 'tally', from: 'createServer' }]);
  });

  describe.each([SCRIPT, BINARY])('served by %s', (name) => {
    it('A2A SendMessage (blocking) returns the completed task with its artifact', async () => {
      const { url } = server(name);
      const configuration = { returnImmediately: false };
      const { result, error } = await rpc(url, 'SendMessage', {
        message: skillMessage('tally', { n: 3 }),
        configuration,
      });
      expect(error).toBeUndefined();
      expect(result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(result.task.status.message.parts).toEqual([{ text: 'Counted to 3' }]);
      expect(result.task.artifacts).toHaveLength(1);
      expect(result.task.artifacts[0]).toMatchObject({ name: 'tally.txt', parts: [{ text: '1\n2\n3' }] });
    });

    it('A2A SendStreamingMessage streams the task, its progress, and the completion', async () => {
      const stream = await openSse(`${server(name).url}/`, {
        method: 'POST',
        headers: { ...V1, Accept: 'text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendStreamingMessage',
          params: { message: skillMessage('tally', { n: 2 }) },
        }),
      });
      expect(stream.status).toBe(200);
      const results = (await stream.rest()).map((e) => e.data.result);
      expect(Object.keys(results[0] ?? {}), stream.raw()).toEqual(['task']);
      const states = results.filter((r) => r.statusUpdate).map((r) => r.statusUpdate.status.state);
      expect(states.at(-1), stream.raw()).toBe('TASK_STATE_COMPLETED');
      const progress = results.map((r) => r.statusUpdate?.metadata?.[HANDLE]?.progress).filter(Boolean);
      expect(progress, stream.raw()).toEqual([
        { percent: 50, message: '1 of 2' },
        { percent: 100, message: '2 of 2' },
      ]);
      expect(
        results.some((r) => r.artifactUpdate?.artifact.name === 'tally.txt'),
        stream.raw(),
      ).toBe(true);
    });

    it('MCP: tools/list shows the skill, tools/call runs it', async () => {
      const client = new Client({ name: 'package-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server(name).url}/mcp`)));
      try {
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name)).toEqual(['tally']);
        expect(tools[0]?.inputSchema).toMatchObject({
          type: 'object',
          properties: { n: { type: 'integer' } },
        });
        const result = await client.callTool({ name: 'tally', arguments: { n: 2 } });
        expect(result.isError).toBe(false);
        expect(result.content).toContainEqual({ type: 'text', text: 'Counted to 2' });
      } finally {
        await client.close();
      }
    });

    it('/v1/jobs: 202 with Location, polled to completed, the result collected', async () => {
      const { url } = server(name);
      const res = await fetch(`${url}/v1/jobs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ skill: 'tally', input: { n: 4 } }),
      });
      expect(res.status).toBe(202);
      const location = res.headers.get('location') ?? '';
      expect(location).toMatch(/^\/v1\/jobs\/[^/]+$/);
      const job = await jobUntil(url, location, 'completed');
      expect(job.statusMessage).toBe('Counted to 4');
      const collected = (await (await fetch(`${url}${location}/result`)).json()) as Json;
      expect(collected.artifacts[0]).toMatchObject({ name: 'tally.txt', parts: [{ text: '1\n2\n3\n4' }] });
    });

    it("a JobError thrown by the user's module is the failure the caller reads", async () => {
      const { url } = server(name);
      const res = await fetch(`${url}/v1/jobs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ skill: 'tally', input: { n: 13 } }),
      });
      const job = await jobUntil(url, res.headers.get('location') ?? '', 'failed');
      expect(job.statusMessage).toBe('Job failed: 13 is not counted here');
    });

    it("the browser pages' assets are served from the installed package", async () => {
      const { url } = server(name);
      for (const asset of [
        '/inbox/inbox.js',
        '/console/console.js',
        '/console/uplot.js',
        '/inbox/kit.js',
        '/console/kit.css',
        '/console/states.js',
      ])
        expect((await fetch(`${url}${asset}`)).status, asset).toBe(200);
    });
  });

  it('each stops on SIGTERM and exits 0 by itself', async () => {
    const codes = await Promise.all([SCRIPT, BINARY].map((n) => server(n).stop()));
    expect(codes, [SCRIPT, BINARY].map((n) => server(n).output()).join('\n')).toEqual([0, 0]);
  });
});
