import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './a2a.js';
import { type Cluster, startCluster } from './cluster.js';
import { skipWithoutPostgres } from './postgres.js';
import { moduleFolder, TASKHANDLE } from './skill-module.js';

/**
 * Remote workers of a cluster: two server instances on one PostgreSQL schema, three workers
 * claiming through either; every task is worked once, and a claim waiting on one instance hears of
 * a task created on the other.
 */
const noPostgres = await skipWithoutPostgres();

const SKILLS = moduleFolder('workers-cluster').write(
  'remote.mjs',
  `import { defineRemoteSkill } from '${TASKHANDLE}';
export const render = defineRemoteSkill({
  id: 'render', description: 'Renders a frame', input: { type: 'object' },
  pollIntervalMs: 500, ttlMs: 3_600_000, onInterrupt: 'rerun',
});
`,
);

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected freely in tests
type Json = Record<string, any>;

describe.skipIf(noPostgres)('remote workers across instances (PostgreSQL)', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(2, {
      apiKeys: { alice: 'acme', robot: 'ops' },
      env: { SKILLS, BUILTIN_SKILLS: 'none', WORKERS: 'ops/robot', MAX_ARTIFACT_BYTES: '200000' },
    });
  }, 60_000);
  afterAll(async () => {
    await cluster?.close();
  });

  const post = async (
    url: string,
    path: string,
    key: string,
    body: unknown,
    lease?: string,
  ): Promise<Json> => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        'X-API-Key': key,
        'content-type': 'application/json',
        ...(lease ? { 'Lease-Token': lease } : {}),
      },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    return (await res.json()) as Json;
  };

  it('a claim waiting on one instance gets the task created on the other', async () => {
    const [a, b] = cluster.agents as [Cluster['agents'][0], Cluster['agents'][0]];
    const robot = a.keys.robot as string;
    const waiting = post(a.url, '/v1/workers/claims', robot, { waitMs: 20_000 });
    const created = await post(b.url, '/v1/jobs', b.keys.alice as string, { skill: 'render', input: {} });
    const { jobs } = await waiting;
    expect(jobs.map((j: Json) => j.taskId)).toEqual([created.taskId]);
    await post(a.url, `/v1/workers/jobs/${created.taskId}/complete`, robot, {}, jobs[0].lease.token);
  });

  it("an artifact appended to through both instances counts every chunk: one instance's count does not miss the other's", async () => {
    const [a, b] = cluster.agents as [Cluster['agents'][0], Cluster['agents'][0]];
    const robot = a.keys.robot as string;
    const created = await post(b.url, '/v1/jobs', b.keys.alice as string, { skill: 'render', input: {} });
    const { jobs } = await post(a.url, '/v1/workers/claims', robot, { waitMs: 5_000 });
    expect(jobs.map((j: Json) => j.taskId)).toEqual([created.taskId]);
    const token = jobs[0].lease.token as string;
    const chunk = 'x'.repeat(60_000);
    const append = (url: string, first = false) =>
      fetch(`${url}/v1/workers/jobs/${created.taskId}/artifacts`, {
        method: 'POST',
        headers: { 'X-API-Key': robot, 'Lease-Token': token, 'content-type': 'application/json' },
        body: JSON.stringify({ artifactId: 'frames', append: !first, parts: [{ text: chunk }] }),
      });
    expect((await append(a.url, true)).status).toBe(200);
    expect((await append(b.url)).status).toBe(200);
    // a counted 60,000 after its own write; b's since makes 120,000, and this one 180,000.
    expect((await append(a.url)).status).toBe(200);
    const refused = await append(a.url);
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as Json).detail).toMatch(/would hold 240000 bytes/);
  });

  it('three workers on two instances share 30 tasks, each completed exactly once', async () => {
    const [a, b] = cluster.agents as [Cluster['agents'][0], Cluster['agents'][0]];
    const robot = a.keys.robot as string;
    const alice = a.keys.alice as string;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      ids.push(
        (await post(i % 2 ? a.url : b.url, '/v1/jobs', alice, { skill: 'render', input: { i } })).taskId,
      );
    }
    const done = new Map<string, string>();
    let stop = false;
    const worker = async (name: string, urls: string[]) => {
      let turn = 0;
      while (!stop) {
        const url = urls[turn++ % urls.length] as string;
        const { jobs } = await post(url, '/v1/workers/claims', robot, { worker: name, max: 2, waitMs: 300 });
        for (const j of jobs as Json[]) {
          expect(done.has(j.taskId), `${j.taskId} handed out twice`).toBe(false);
          done.set(j.taskId, name);
          await post(url, `/v1/workers/jobs/${j.taskId}/complete`, robot, { message: name }, j.lease.token);
        }
      }
    };
    const workers = [worker('w1', [a.url]), worker('w2', [b.url]), worker('w3', [a.url, b.url])];
    await eventually(async () => (ids.every((id) => done.has(id)) ? true : undefined), 30_000);
    stop = true;
    await Promise.all(workers);
    const byWorker = new Map<string, number>();
    for (const name of done.values()) byWorker.set(name, (byWorker.get(name) ?? 0) + 1);
    // Each worker took a share (no one starves while others claim); counts depend on timing.
    expect([...byWorker.keys()].sort()).toEqual(['w1', 'w2', 'w3']);
    for (const id of ids) {
      const res = await fetch(`${b.url}/v1/jobs/${id}`, { headers: { 'X-API-Key': alice } });
      const job = (await res.json()) as Json;
      expect(job.status).toBe('completed');
      expect(job.statusMessage).toBe(done.get(id));
    }
  }, 60_000);
});
