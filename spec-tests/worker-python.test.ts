import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, launch } from './harness.js';
import { type Served, serve } from './served.js';

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

const SKILLS = fileURLToPath(new URL('./fixtures/remote-skills.mjs', import.meta.url));
const WORKER = fileURLToPath(new URL('../examples/worker.py', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const hasPython = spawnSync('python3', ['--version']).status === 0;

/** What examples/worker.py's py.checksum computes: `rounds` rounds of sha256, each over the last hex. */
const checksum = (text: string, rounds: number): string => {
  let value = text;
  for (let i = 0; i < rounds; i++) value = createHash('sha256').update(value).digest('hex');
  return value;
};

describe.skipIf(!hasPython)(
  `examples/worker.py against the real server${hasPython ? '' : ' (skipped: python3 is not on PATH)'}`,
  () => {
    let agent: Agent;
    const pythons: Served[] = [];
    beforeAll(async () => {
      agent = await launch({ env: { SKILLS, BUILTIN_SKILLS: 'none', LEASE_MS: '3000' } });
    });
    afterAll(async () => {
      await Promise.all(pythons.map((p) => p.stop()));
      await agent?.stop();
    });

    const python = async (name: string): Promise<Served> => {
      const served = await serve('python3', [WORKER], {
        cwd: ROOT,
        env: { ...process.env, TASKHANDLE_URL: agent.url, WORKER_NAME: name, PYTHONUNBUFFERED: '1' },
        urlOf: (line) => (line.msg === 'worker started' ? String(line.url) : undefined),
      });
      pythons.push(served);
      return served;
    };
    const api = async (method: string, path: string, body?: unknown): Promise<Json> => {
      const res = await fetch(`${agent.url}${path}`, {
        method,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as Json;
    };
    const jobUntil = async (id: string, ok: (job: Json) => boolean, what: string): Promise<Json> => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const job = await api('GET', `/v1/jobs/${id}`);
        if (ok(job)) return job;
        if (Date.now() > deadline) throw new Error(`job ${id} not ${what}: ${JSON.stringify(job)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    it('completes a py.checksum job with the sha256 as its artifact', async () => {
      const worker = await python('py-1');
      const { taskId } = await api('POST', '/v1/jobs', {
        skill: 'py.checksum',
        input: { text: 'hello', rounds: 3 },
      });
      const expected = checksum('hello', 3);
      const done = await jobUntil(taskId, (j) => j.status !== 'working', 'ended');
      expect(done.status, worker.output()).toBe('completed');
      expect(done.statusMessage).toBe(`sha256 after 3 rounds: ${expected}`);
      const { artifacts } = await api('GET', `/v1/jobs/${taskId}/result`);
      expect(artifacts).toHaveLength(1);
      expect(artifacts[0]).toMatchObject({ name: 'sha256.txt', parts: [{ text: expected }] });
      expect(await worker.stop()).toBe(0);
    });

    it('Ctrl-C releases the job it holds: another worker completes it', async () => {
      const first = await python('py-first');
      const { taskId } = await api('POST', '/v1/jobs', {
        skill: 'py.checksum',
        input: { text: 'x', rounds: 100 },
      });
      await jobUntil(taskId, (j) => j.progress?.percent > 0, 'in progress');
      const exited = new Promise((resolve) => first.proc.once('exit', (code) => resolve(code)));
      first.proc.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(first.output()).toContain(`released ${taskId}`);

      const second = await python('py-second');
      const done = await jobUntil(taskId, (j) => j.status !== 'working', 'ended');
      expect(done.status, second.output()).toBe('completed');
      expect(done.statusMessage).toBe(`sha256 after 100 rounds: ${checksum('x', 100)}`);
    });
  },
);
