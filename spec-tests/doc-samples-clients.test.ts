import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, launch } from './harness.js';
import { ROOT } from './package-project.js';
import { createJob, getJson, type Job, jobUntil, runSample } from './sample-run.js';

/**
 * The clients the docs show, run as printed against the real server but for its address: the MCP
 * client of docs/walkthrough.md, the worker of docs/workers.md (for its remote skill), and the agent
 * card check of docs/SECURITY.md.
 */

const PRINTED = 'http://127.0.0.1:41241';
const userEnv = () => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' });
const ended = (job: Job) => !['working', 'input_required'].includes(job.status);

describe('the clients of the docs, against a real server', () => {
  let agent: Agent;
  let workerAgent: Agent;
  let images: Server;
  let imagesUrl = '';
  const PNG = Buffer.from('\x89PNG\r\n\x1a\n a picture', 'latin1');

  beforeAll(async () => {
    images = createServer((req, res) => {
      if (req.url === '/cat.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    imagesUrl = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
    [agent, workerAgent] = await Promise.all([
      launch(),
      launch({
        env: { BUILTIN_SKILLS: 'none', SKILLS: join(ROOT, 'examples/docs/skills/resize.mjs') },
      }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([agent?.stop(), workerAgent?.stop()]);
    await new Promise((resolve) => images?.close(resolve));
  });

  it('walkthrough.md, MCP clients: mcp-client.mjs prints the task at once, then the export result', async () => {
    const client = runSample('examples/docs/mcp-client.mjs', [[PRINTED, agent.url]], {
      cwd: ROOT,
      env: userEnv(),
    });
    await client.line(/^task \S+$/);
    await client.line(/Exported 3 rows to export\.csv/);
    expect(await client.exited, client.output()).toBe(0);
  });

  it('workers.md, runWorker: worker.mjs works resize, uploading the image; a 404 fails it saying so', async () => {
    const worker = runSample('examples/docs/worker.mjs', [[PRINTED, workerAgent.url]], {
      cwd: ROOT,
      env: userEnv(),
    });
    try {
      const { job } = await createJob(workerAgent.url, {
        skill: 'resize',
        input: { url: `${imagesUrl}/cat.png`, width: 64 },
      });
      expect(await jobUntil(workerAgent.url, job.taskId, ended)).toMatchObject({
        status: 'completed',
        statusMessage: 'resized to 64 px',
      });
      const result = await getJson(`${workerAgent.url}/v1/jobs/${job.taskId}/result`);
      expect(result.artifacts.map((a: { name: string }) => a.name)).toEqual(['small.png']);
      const missing = `${imagesUrl}/missing.png`;
      const { job: lost } = await createJob(workerAgent.url, {
        skill: 'resize',
        input: { url: missing, width: 64 },
      });
      expect(await jobUntil(workerAgent.url, lost.taskId, ended)).toMatchObject({
        status: 'failed',
        statusMessage: `Job failed: ${missing} answered 404`,
      });
    } finally {
      worker.proc.kill('SIGTERM');
      expect(await worker.exited, worker.output()).toBe(0);
    }
  });

  it("SECURITY.md, verifying as a peer: verify-card.mjs verifies the agent card's signature", async () => {
    const check = runSample('examples/docs/verify-card.mjs', [['https://agent.example', agent.url]], {
      cwd: ROOT,
      env: userEnv(),
    });
    await check.line(/^verified by \S+$/);
    expect(await check.exited, check.output()).toBe(0);
  });
});
