import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './harness.js';
import { assertBuilt } from './package-project.js';
import {
  createJob,
  getJson,
  interrupt,
  type Job,
  jobUntil,
  pick,
  runSample,
  type Sample,
  shownOn,
} from './sample-run.js';

/**
 * docs/api.md's programs, run as printed but for their port: the complete example (agent.mjs) does
 * what the page's curl session shows, and the two mountings serve the agent beside routes of their
 * own. What the page shows printed is read from the page, with the printed address put back.
 */

const PAGE = 'docs/api.md';
const SHOWN = shownOn(PAGE);
const env = (dir: string) => ({ PATH: process.env.PATH ?? '', HOME: dir });
const terminal = (job: Job) => !['working', 'input_required'].includes(job.status);

describe('docs/api.md, A complete example: agent.mjs', () => {
  let dir = '';
  let agent: Sample;
  let url = '';
  /** As the page prints it: at http://127.0.0.1:41241. */
  const printed = (text: string) => text.replaceAll(url, 'http://127.0.0.1:41241');

  beforeAll(async () => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'taskhandle-api-sample-'));
    // The page's port, 41241, is the test's free one; its ./data/invoices.db is in `dir`.
    agent = runSample('examples/docs/agent.mjs', [['41241', '0']], { cwd: dir, env: env(dir) });
    const [line = '', found = ''] = await agent.line(/^invoice agent at (\S+), serving .*$/);
    url = found;
    expect(SHOWN).toContain(printed(line));
  });

  afterAll(async () => {
    if (agent) await interrupt(agent.proc);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a small invoice completes with its progress, and its artifact is the invoice', async () => {
    const { job: created } = await createJob(url, {
      skill: 'invoice',
      input: { customer: 'acme', amounts: [120, 80.5] },
    });
    const job = await jobUntil(url, created.taskId, terminal);
    expect(SHOWN).toContain(pick(job, 'status', 'statusMessage', 'progress'));
    const result = await getJson(`${url}/v1/jobs/${created.taskId}/result`);
    expect(SHOWN).toContain(JSON.stringify(result.artifacts[0].parts));
  });

  it('a large one waits for an answer; one the schema refuses is not taken, approve completes it', async () => {
    const { job: created } = await createJob(url, {
      skill: 'invoice',
      input: { customer: 'globex', amounts: [900, 450] },
    });
    const id = created.taskId;
    const waiting = await jobUntil(url, id, (j) => j.status !== 'working');
    expect(SHOWN).toContain(pick(waiting, 'status', 'statusMessage'));
    const answer = (text: string) =>
      fetch(`${url}/v1/jobs/${id}:input`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ text }),
      });
    await answer('maybe');
    const refused = await jobUntil(
      url,
      id,
      (j) => j.status === 'input_required' && /not accepted/.test(j.statusMessage),
    );
    const [prompt = '', why = ''] = String(refused.statusMessage).split('\n');
    expect(SHOWN).toEqual(expect.arrayContaining([prompt, why]));
    await answer('approve');
    expect(SHOWN).toContain(pick(await jobUntil(url, id, terminal), 'status', 'statusMessage'));
  });

  it('a JobError is what the caller reads; a bad input is refused naming the field', async () => {
    const { job: created } = await createJob(url, {
      skill: 'invoice',
      input: { customer: 'initech', amounts: [10] },
    });
    expect(SHOWN).toContain(pick(await jobUntil(url, created.taskId, terminal), 'status', 'statusMessage'));
    const { status, job: problem } = await createJob(url, {
      skill: 'invoice',
      input: { customer: 'acme', amount: [10] },
    });
    expect(status).toBe(400);
    expect(SHOWN).toContain(problem.detail);
  });

  it('Ctrl-C stops the server in order and prints stopped', async () => {
    expect(await interrupt(agent.proc), agent.output()).toBe(0);
    expect(agent.output().split('\n')).toContain('stopped');
  });
});

describe('docs/api.md, Mounting in your app', () => {
  let dir = '';
  beforeAll(() => {
    assertBuilt();
    dir = mkdtempSync(join(tmpdir(), 'taskhandle-mount-sample-'));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Runs a mounting sample on a free port in place of its 3000; its base URL once it answers. */
  async function mounted(path: string, probe: string): Promise<{ sample: Sample; base: string }> {
    const port = await freePort();
    const sample = runSample(path, [['3000', String(port)]], {
      cwd: dir,
      env: { ...env(dir), DATABASE_URL: `sqlite:${join(dir, `${port}.db`)}` },
    });
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    for (;;) {
      const answered = await fetch(`${base}${probe}`).then(
        (r) => r.ok,
        () => false,
      );
      if (answered) return { sample, base };
      if (sample.proc.exitCode !== null || Date.now() > deadline) {
        await interrupt(sample.proc);
        throw new Error(`${path} did not serve ${probe}:\n${sample.output()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('node:http: its own route beside the agent, whose card and links start with publicUrl; Ctrl-C ends it', async () => {
    const { sample, base } = await mounted('examples/docs/mount-node-http.mjs', '/hello');
    try {
      expect(await (await fetch(`${base}/hello`)).text()).toBe('my own route\n');
      const card = await getJson(`${base}/.well-known/agent-card.json`);
      expect(card.url).toBe(`${base}/`);
      expect(card.skills.map((s: { id: string }) => s.id)).toContain('countdown');
    } finally {
      expect(await interrupt(sample.proc), sample.output()).toBe(0);
    }
  });

  it("express, under /agent: the page's curl session, its app's route, a JSON body read; Ctrl-C ends it", async () => {
    const { sample, base } = await mounted('examples/docs/mount-express.mjs', '/');
    const printed = (text: string) => text.replaceAll(base, 'http://127.0.0.1:3000');
    try {
      expect(await (await fetch(`${base}/`)).text()).toBe('my app');
      const card = await getJson(`${base}/agent/.well-known/agent-card.json`);
      const skills = card.skills.map((s: { id: string }) => s.id);
      expect(SHOWN).toContain(printed(JSON.stringify({ url: card.url, skills })));
      const { status, job } = await createJob(`${base}/agent`, { skill: 'countdown', input: { from: 2 } });
      expect(status).toBe(202);
      expect(SHOWN).toContain(pick(job, 'status', 'pollIntervalMs'));
    } finally {
      expect(await interrupt(sample.proc), sample.output()).toBe(0);
    }
  });
});
