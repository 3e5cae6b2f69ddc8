import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, launch } from './harness.js';
import { ROOT } from './package-project.js';
import { createJob, type Job, jobUntil } from './sample-run.js';

/**
 * The skills of docs/skills.md and docs/scheduling.md, served as skill modules by the real server:
 * each does what the page says of it. Their files are the pages' samples (doc-samples.test.ts).
 */

const sample = (file: string) => join(ROOT, 'examples/docs', file);
/** docs/skills.md with its lines joined: what it quotes may wrap. */
const SKILLS_PAGE = readFileSync(join(ROOT, 'docs/skills.md'), 'utf8').replace(/\s+/g, ' ');
const ended = (job: Job) => !['working', 'input_required'].includes(job.status);

describe('docs/skills.md and docs/scheduling.md: their skills, served', () => {
  let agent: Agent;
  let schemaAgent: Agent;
  let registry: Server;
  /** What the registry of publish.mjs answers next. */
  let registryAnswers = 503;
  const alice = () => agent.as('alice').credentials;

  beforeAll(async () => {
    registry = createServer((_req, res) => res.writeHead(registryAnswers).end());
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    const { port } = registry.address() as AddressInfo;
    [agent, schemaAgent] = await Promise.all([
      launch({
        apiKeys: { alice: 'acme', bob: 'acme' },
        env: {
          BUILTIN_SKILLS: 'none',
          SKILLS: ['my-skills.mjs', 'deploy.mjs', 'publish.mjs', 'render.mjs'].map(sample).join(','),
          REGISTRY_URL: `http://127.0.0.1:${port}`,
        },
      }),
      // Its countdown has the id of my-skills.mjs's: a server of its own.
      launch({ env: { BUILTIN_SKILLS: 'none', SKILLS: sample('countdown-json-schema.mjs') } }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([agent?.stop(), schemaAgent?.stop()]);
    await new Promise((resolve) => registry?.close(resolve));
  });

  it('my-skills.mjs: the countdown completes; from 13 it fails with the JobError the page quotes', async () => {
    const { job: counted } = await createJob(agent.url, { skill: 'countdown', input: { from: 1 } }, alice());
    expect(await jobUntil(agent.url, counted.taskId, ended, alice())).toMatchObject({
      status: 'completed',
      statusMessage: 'Lift-off',
    });
    const { job: unlucky } = await createJob(agent.url, { skill: 'countdown', input: { from: 13 } }, alice());
    const failed = await jobUntil(agent.url, unlucky.taskId, ended, alice());
    expect(failed.status).toBe('failed');
    expect(SKILLS_PAGE).toContain(`fails the task with "${failed.statusMessage}"`);
  });

  it('countdown-json-schema.mjs: a JSON Schema input refuses 1.5 with the words the page gives', async () => {
    const { status, job } = await createJob(schemaAgent.url, { skill: 'countdown', input: { from: 1.5 } });
    expect(status).toBe(400);
    expect(SKILLS_PAGE).toContain(`\`{"from": 1.5}\`: \`${job.detail}\``);
  });

  it('deploy.mjs: the task waits for an answer, and acme/bob, its approver, rejects it', async () => {
    const { job } = await createJob(agent.url, { skill: 'deploy', input: {} }, alice());
    const waiting = await jobUntil(agent.url, job.taskId, (j) => j.status !== 'working', alice());
    expect(waiting).toMatchObject({
      status: 'input_required',
      statusMessage: 'Deploy v2 to production? (approve/reject)',
    });
    const bob = agent.as('bob').credentials;
    const answered = await fetch(`${agent.url}/v1/jobs/${job.taskId}:input`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...bob },
      body: JSON.stringify({ text: 'reject' }),
    });
    expect(answered.status, await answered.text()).toBeLessThan(300);
    expect(await jobUntil(agent.url, job.taskId, ended, alice())).toMatchObject({
      state: 'rejected',
      statusMessage: 'Rejected by acme/bob',
    });
  });

  it('publish.mjs: a 503 from the registry is retried after a backoff, as the page says, then it publishes', async () => {
    registryAnswers = 503;
    const input = { name: 'left-pad', version: '1.0.0' };
    const { job } = await createJob(agent.url, { skill: 'publish', input }, alice());
    const waiting = await jobUntil(
      agent.url,
      job.taskId,
      (j) => /^Attempt 1 of 4/.test(j.statusMessage ?? ''),
      alice(),
    );
    expect(waiting.statusMessage).toMatch(
      /^Attempt 1 of 4 failed: the registry answered 503; next attempt at \S+$/,
    );
    expect(SKILLS_PAGE).toContain('`Attempt 1 of 4 failed: <reason>; next attempt at <time>`');
    registryAnswers = 201;
    expect(await jobUntil(agent.url, job.taskId, ended, alice())).toMatchObject({
      status: 'completed',
      statusMessage: 'Published left-pad@1.0.0',
    });
  });

  it('render.mjs: with concurrency 2, a third render waits queued while two run', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { job } = await createJob(agent.url, { skill: 'render', input: { frames: 600 } }, alice());
      ids.push(job.taskId);
    }
    try {
      const [first = '', second = '', third = ''] = ids;
      const running = (j: Job) => j.state === 'working';
      await jobUntil(agent.url, first, running, alice());
      await jobUntil(agent.url, second, running, alice());
      const queued = await jobUntil(agent.url, third, () => true, alice());
      expect(queued.state).toBe('submitted');
      expect(queued.queue).toBeDefined();
    } finally {
      for (const id of ids) await fetch(`${agent.url}/v1/jobs/${id}`, { method: 'DELETE', headers: alice() });
    }
  });
});
