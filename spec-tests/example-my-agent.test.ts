import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT, run } from './package-project.js';
import { listeningUrl, type Served, ServedSet, serve, userEnv } from './served.js';

const EXAMPLE = join(ROOT, 'examples/my-agent');
const README = readFileSync(join(EXAMPLE, 'README.md'), 'utf8');

/** The README's job request (its `-d '...'`) and the path it collects the result at. */
function readmeFlow(): { body: unknown; resultPath: string } {
  const body = /-d '(\{.+\})'/.exec(README)?.[1];
  const resultPath = /\$job(\/result\?download=1)"/.exec(README)?.[1];
  if (!body || !resultPath) throw new Error('examples/my-agent/README.md no longer shows the curl flow');
  return { body: JSON.parse(body), resultPath };
}

/**
 * The example as its README installs it: `npm install` in its folder links the clone (file:../..)
 * and takes zod from npm's cache, filled by the root's install. Scripts are skipped: the link's
 * `prepare` would rebuild dist/src under the test files running beside this one.
 */
async function installExample(): Promise<void> {
  const installed = ['taskhandle/package.json', 'zod/package.json', '.bin/taskhandle'];
  if (installed.every((f) => existsSync(join(EXAMPLE, 'node_modules', f)))) return;
  const args = [
    'install',
    '--prefer-offline',
    '--ignore-scripts',
    '--no-audit',
    '--no-fund',
    '--no-package-lock',
  ];
  await run('npm', args, { cwd: EXAMPLE, timeoutMs: 120_000 });
}

async function jobUntilDone(url: string, location: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const job = (await (await fetch(`${url}${location}`)).json()) as Record<string, unknown>;
    if (job.status !== 'working') return job;
    if (Date.now() > deadline) throw new Error(`${location} still working: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const post = (url: string, body: unknown) =>
  fetch(`${url}/v1/jobs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

const SERVER = 'node server.mjs';
const BINARY = 'npx taskhandle serve --skills ./skills.mjs';

describe('examples/my-agent: the README, as printed, against the example', () => {
  let dir = '';
  const servers = new ServedSet();
  const server = (name: string): Served => servers.get(name);

  beforeAll(async () => {
    assertBuilt();
    await installExample();
    dir = mkdtempSync(join(tmpdir(), 'taskhandle-my-agent-'));
    const env = (db: string) => userEnv(dir, db);
    const urlOf = listeningUrl;
    // Each is kept as soon as it listens: afterAll stops it even when the other fails to start.
    const { keep } = servers;
    await Promise.all([
      serve(process.execPath, ['server.mjs'], { cwd: EXAMPLE, env: env('server.db'), urlOf }).then(
        keep(SERVER),
      ),
      // What npx runs: the bin the install linked.
      serve(join(EXAMPLE, 'node_modules/.bin/taskhandle'), ['serve', '--skills', './skills.mjs'], {
        cwd: EXAMPLE,
        env: { ...env('binary.db'), BUILTIN_SKILLS: 'none' },
        urlOf,
      }).then(keep(BINARY)),
    ]);
  }, 180_000);

  afterAll(async () => {
    await servers.stopAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe.each([SERVER, BINARY])('%s', (name) => {
    it('serves the report skill alone', () => {
      const skills = server(name).line.skills as { id: string }[];
      expect(skills.map((s) => s.id)).toEqual(['report']);
    });

    it("the README's curl flow: POST /v1/jobs is 202 with Location, its result?download=1 the CSV", async () => {
      const { url } = server(name);
      const { body, resultPath } = readmeFlow();
      const res = await post(url, body);
      expect(res.status).toBe(202);
      const location = res.headers.get('location') ?? '';
      expect(location).toMatch(/^\/v1\/jobs\/[^/]+$/);
      expect(await jobUntilDone(url, location)).toMatchObject({ status: 'completed' });
      const csv = await fetch(`${url}${location}${resultPath}`);
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(csv.headers.get('content-disposition')).toContain('report-2025-01.csv');
      const lines = (await csv.text()).split('\r\n').filter((l) => l !== '');
      expect(lines[0]).toBe('day,orders,revenue');
      expect(lines).toHaveLength(32);
      expect(lines[31]).toMatch(/^2025-01-31,\d+,\d+\.\d\d$/);
    });

    it('a month not begun fails with the JobError the skill threw', async () => {
      const { url } = server(name);
      const res = await post(url, { skill: 'report', input: { month: '2999-01' } });
      const job = await jobUntilDone(url, res.headers.get('location') ?? '');
      expect(job).toMatchObject({
        status: 'failed',
        statusMessage: 'Job failed: 2999-01 has not begun: nothing to report',
      });
    });
  });

  it('each stops on SIGTERM and exits 0 by itself', async () => {
    const codes = await Promise.all([SERVER, BINARY].map((n) => server(n).stop()));
    expect(codes, [SERVER, BINARY].map((n) => server(n).output()).join('\n')).toEqual([0, 0]);
  });
});
