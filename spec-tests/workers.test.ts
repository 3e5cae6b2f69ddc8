import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, skillMessage, V1 } from './a2a.js';
import { type Agent, hashApiKey, launch, newApiKey } from './harness.js';
import { moduleFolder, TASKHANDLE, ZOD } from './skill-module.js';

/**
 * The worker protocol (docs/workers.md) as a worker in any language speaks it: plain HTTP + JSON
 * against the real server, a remote skill declared in a skills module.
 */

const folder = moduleFolder('workers');
const SKILLS = folder.write(
  'remote.mjs',
  `import { defineRemoteSkill, defineSkill } from '${TASKHANDLE}';
import { z } from '${ZOD}';
export const resize = defineRemoteSkill({
  id: 'resize', description: 'Resizes an image on a GPU box', input: z.object({ width: z.number().int().positive() }),
  pollIntervalMs: 500, ttlMs: 3_600_000, onInterrupt: 'rerun',
  retry: { attempts: 2, backoff: { initialMs: 10, maxMs: 10 } },
});
export const once = defineRemoteSkill({
  id: 'once', description: 'Must not run twice', input: { type: 'object' },
  pollIntervalMs: 500, ttlMs: 3_600_000, onInterrupt: 'fail',
});
export const local = defineSkill({
  id: 'local', description: 'Runs in the server', input: z.object({}),
  pollIntervalMs: 500, ttlMs: 3_600_000, onInterrupt: 'rerun',
  async run() { return { message: 'ran in the server' }; },
});
`,
);

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected freely in tests
type Json = Record<string, any>;

let agent: Agent;
let worker: Record<string, string>;
let caller: Record<string, string>;

beforeAll(async () => {
  agent = await launch({
    apiKeys: { alice: 'acme', robot: 'ops' },
    env: {
      SKILLS,
      BUILTIN_SKILLS: 'none',
      WORKERS: 'ops/robot',
      LEASE_MS: '1500',
      RUNNER_POLL_MS: '100',
      MAX_ARTIFACT_BYTES: '200000',
      MAX_STORED_BYTES: '1000000',
      METRICS_TOKEN: 'scrape-me-0123456789',
      OPERATORS: 'acme/alice',
      MAX_WAITING_CLAIMS: '3',
    },
  });
  worker = { 'X-API-Key': agent.keys.robot as string };
  caller = { 'X-API-Key': agent.keys.alice as string };
});

afterAll(async () => {
  await agent?.stop();
});

async function call(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${agent.url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
}

const createJob = async (skill: string, input: unknown): Promise<string> => {
  const { status, body } = await call('POST', '/v1/jobs', caller, { skill, input });
  expect(status).toBe(202);
  return body.taskId as string;
};
const job = async (id: string) => (await call('GET', `/v1/jobs/${id}`, caller)).body;
const claim = async (body: unknown = {}) => call('POST', '/v1/workers/claims', worker, body);
const write = (taskId: string, token: string, what: string, body?: unknown) =>
  call('POST', `/v1/workers/jobs/${taskId}/${what}`, { ...worker, 'Lease-Token': token }, body);
/** Claims until the task `id` comes (other tests' tasks are worked too, by completing them). */
async function claimTask(id: string, skills = ['resize']): Promise<Json> {
  return eventually(async () => {
    const { status, body } = await claim({ skills, max: 8, waitMs: 1000 });
    expect(status).toBe(200);
    const jobs = body.jobs as Json[];
    for (const j of jobs) if (j.taskId !== id) await write(j.taskId, j.lease.token, 'release');
    return jobs.find((j) => j.taskId === id);
  });
}

describe('remote workers', () => {
  it('a worker claims a remote task, reports, writes an artifact and completes it; the caller sees it all', async () => {
    const id = await createJob('resize', { width: 640 });
    const claimed = await claimTask(id);
    expect(claimed).toMatchObject({
      taskId: id,
      skill: 'resize',
      input: { width: 640 },
      attempt: 1,
      interrupted: false,
      answers: [],
      lease: { token: expect.any(String), heartbeatMs: 500 },
    });
    expect(claimed.message.parts[0].data).toEqual({ skill: 'resize', input: { width: 640 } });
    const token = claimed.lease.token as string;
    expect((await write(id, token, 'heartbeat')).body).toMatchObject({
      state: 'working',
      cancelRequested: false,
    });
    expect((await write(id, token, 'progress', { percent: 40, message: 'resizing' })).status).toBe(200);
    expect((await job(id)).progress).toEqual({ percent: 40, message: 'resizing' });
    const art = await write(id, token, 'artifacts', { name: 'size', parts: [{ data: { width: 640 } }] });
    expect(art.status).toBe(200);
    const done = await write(id, token, 'complete', { message: 'resized to 640' });
    expect(done.body).toEqual({ taskId: id, state: 'completed' });
    expect(await job(id)).toMatchObject({ status: 'completed', statusMessage: 'resized to 640' });
    const result = (await call('GET', `/v1/jobs/${id}/result`, caller)).body;
    expect(JSON.stringify(result.artifacts)).toContain('"width":640');
    // The task has an artifact of its own: the reply stays its status message, not a second artifact.
    expect(result.artifacts).toHaveLength(1);
    // Finished: the lease holds nothing any more, and says so.
    const late = await write(id, token, 'progress', { percent: 90 });
    expect(late.status).toBe(409);
    expect(late.body.reason).toBe('lease-lost');
  });

  it('chunks appended call after call, written or uploaded, add up: past MAX_ARTIFACT_BYTES the append fails the task', async () => {
    const id = await createJob('resize', { width: 1 });
    const token = (await claimTask(id)).lease.token as string;
    const chunk = 'x'.repeat(60_000);
    const append = () =>
      write(id, token, 'artifacts', { artifactId: 'log', append: true, parts: [{ text: chunk }] });
    const upload = () =>
      fetch(`${agent.url}/v1/workers/jobs/${id}/artifacts/log?append=true`, {
        method: 'PUT',
        headers: { ...worker, 'Lease-Token': token, 'content-type': 'application/octet-stream' },
        body: Buffer.from(chunk),
      });
    expect(
      (await write(id, token, 'artifacts', { artifactId: 'log', parts: [{ text: chunk }] })).status,
    ).toBe(200);
    // Progress between writes moves the log on and changes no artifact.
    expect((await write(id, token, 'progress', { percent: 50 })).status).toBe(200);
    expect((await upload()).status).toBe(200);
    expect((await upload()).status).toBe(200);
    // 240,000 bytes with this one, over the 200,000 MAX_ARTIFACT_BYTES allows.
    const refused = await append();
    expect(refused.status).toBe(413);
    expect(refused.body.detail).toMatch(/artifact log would hold 240000 bytes; at most 200000/);
    expect((await job(id)).status).toBe('failed');
    // What was appended before the refusal stays, whole.
    const kept = await fetch(`${agent.url}/v1/jobs/${id}/artifacts/log`, { headers: caller });
    expect(kept.status).toBe(200);
    expect(await kept.text()).toBe(chunk.repeat(3));
  });

  it('a stale or foreign lease token is refused with 409 and writes nothing', async () => {
    const id = await createJob('resize', { width: 1 });
    const claimed = await claimTask(id);
    const before = await job(id);
    const foreign = await write(id, '11111111-2222-3333-4444-555555555555', 'progress', { percent: 10 });
    expect(foreign.status).toBe(409);
    expect(foreign.body.detail).toMatch(/Stop working on it/);
    expect((await write(id, 'x', 'complete', {})).status).toBe(409);
    const missing = await call('POST', `/v1/workers/jobs/${id}/complete`, worker, {});
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toMatch(/Lease-Token/);
    expect(await job(id)).toEqual(before);
    await write(id, claimed.lease.token, 'complete', {});
  });

  it('a worker that stops heartbeating loses the task to the next claim, which sees the interruption', async () => {
    const id = await createJob('resize', { width: 2 });
    const first = await claimTask(id);
    // No heartbeat: once LEASE_MS passes, the next claim takes it over.
    const second = await claimTask(id);
    expect(second).toMatchObject({ interrupted: true, attempt: 2 });
    expect(second.lease.token).not.toBe(first.lease.token);
    expect((await write(id, first.lease.token, 'complete', { message: 'old' })).status).toBe(409);
    expect((await write(id, second.lease.token, 'complete', { message: 'new' })).status).toBe(200);
    expect((await job(id)).statusMessage).toBe('new');
    // A reply with no artifact is the result: the artifact "reply" holds it (the stale one wrote nothing).
    const result = await call('GET', `/v1/jobs/${id}/result`, caller);
    expect(result.body.artifacts).toEqual([
      expect.objectContaining({ artifactId: 'reply', parts: [{ text: 'new' }] }),
    ]);
  });

  it('a skill that asks to fail on interruption is failed by the next claim, not run twice', async () => {
    const id = await createJob('once', {});
    await claimTask(id, ['once']);
    // Its worker died (no heartbeat): the next claim of the skill fails it instead of handing it out.
    await eventually(async () => {
      const { body } = await claim({ skills: ['once'], waitMs: 500 });
      expect(body.jobs).toEqual([]);
      return (await job(id)).status === 'failed' ? true : undefined;
    });
    expect((await job(id)).statusMessage).toMatch(/not re-run automatically/);
  });

  it('fail: the owner reads the message; a retryable failure runs again under the retry policy', async () => {
    const id = await createJob('resize', { width: 3 });
    const first = await claimTask(id);
    const retried = await write(id, first.lease.token, 'fail', { message: 'GPU busy', retryable: true });
    expect(retried.body).toMatchObject({ state: 'submitted', retryAt: expect.any(String) });
    const second = await claimTask(id);
    expect(second.attempt).toBe(2);
    const failed = await write(id, second.lease.token, 'fail', {
      message: 'the image is corrupt',
      code: 'bad',
    });
    expect(failed.body).toEqual({ taskId: id, state: 'failed' });
    expect((await job(id)).statusMessage).toBe(
      'Job failed after 2 attempts:\n1. GPU busy\n2. the image is corrupt',
    );
  });

  it('ask parks the task for its owner; the answer reaches the next claim', async () => {
    const id = await createJob('resize', { width: 4 });
    const first = await claimTask(id);
    const asked = await write(id, first.lease.token, 'ask', {
      prompt: 'Crop or pad?',
      schema: { enum: ['crop', 'pad'] },
    });
    expect(asked.body).toEqual({ taskId: id, state: 'input-required' });
    const waiting = await job(id);
    expect(waiting).toMatchObject({ status: 'input_required', statusMessage: 'Crop or pad?' });
    expect((await call('POST', `/v1/jobs/${id}:input`, caller, { text: 'pad' })).status).toBe(200);
    const second = await claimTask(id);
    expect(second.answers).toEqual([
      { value: 'pad', from: 'acme/alice', message: expect.objectContaining({ role: 'ROLE_USER' }) },
    ]);
    await write(id, second.lease.token, 'complete', { message: 'padded' });
    expect((await job(id)).status).toBe('completed');
  });

  it('cancel reaches the worker at its next heartbeat, which ends the task canceled', async () => {
    const id = await createJob('resize', { width: 5 });
    const claimed = await claimTask(id);
    const canceling = call('DELETE', `/v1/jobs/${id}`, caller);
    const beat = await eventually(async () => {
      const { body } = await write(id, claimed.lease.token, 'heartbeat');
      return body.cancelRequested ? body : undefined;
    });
    expect(beat).toMatchObject({ state: 'canceled', cancelRequested: true });
    expect((await canceling).status).toBe(200);
    expect((await job(id)).status).toBe('cancelled');
  });

  it('a waiting claim is answered by a task created after it began', async () => {
    await eventually(async () =>
      (await claim({ waitMs: 0, max: 32 })).body.jobs.length === 0 ? true : undefined,
    );
    const waiting = claim({ skills: ['resize'], waitMs: 20_000 });
    const id = await createJob('resize', { width: 6 });
    const { body } = await waiting;
    expect(body.jobs.map((j: Json) => j.taskId)).toEqual([id]);
    await write(id, body.jobs[0].lease.token, 'complete', {});
  });

  it('streams an upload in pieces; one larger than MAX_ARTIFACT_BYTES is refused with 413 and fails the task', async () => {
    const id = await createJob('resize', { width: 7 });
    const claimed = await claimTask(id);
    const headers = {
      ...worker,
      'Lease-Token': claimed.lease.token,
      'content-type': 'application/octet-stream',
    };
    const bytes = Buffer.alloc(150_000, 7);
    const ok = await fetch(`${agent.url}/v1/workers/jobs/${id}/artifacts/out?filename=out.bin`, {
      method: 'PUT',
      headers,
      body: bytes,
    });
    expect(await ok.json()).toMatchObject({ artifactId: 'out', bytes: 150_000 });
    const download = await fetch(`${agent.url}/v1/jobs/${id}/artifacts/out`, { headers: caller });
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    const tooBig = await fetch(`${agent.url}/v1/workers/jobs/${id}/artifacts/out?append=true`, {
      method: 'PUT',
      headers,
      body: bytes,
    });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as Json).reason).toBe('artifact-refused');
    const failed = await job(id);
    expect(failed.status).toBe('failed');
    expect(failed.statusMessage).toMatch(/at most 200000 are kept/);
  });

  it('an upload again under the same id (not appended) replaces the artifact, stored and counted once', async () => {
    const id = await createJob('resize', { width: 9 });
    const claimed = await claimTask(id);
    const headers = {
      ...worker,
      'Lease-Token': claimed.lease.token,
      'content-type': 'application/octet-stream',
    };
    // Eight uploads of 150,000 bytes: 1.2 MB as copies, past MAX_STORED_BYTES (1 MB); 150 KB as one.
    for (let fill = 1; fill <= 8; fill++) {
      const put = await fetch(`${agent.url}/v1/workers/jobs/${id}/artifacts/frame?filename=frame.bin`, {
        method: 'PUT',
        headers,
        body: Buffer.alloc(150_000, fill),
      });
      expect(put.status).toBe(200);
    }
    const download = await fetch(`${agent.url}/v1/jobs/${id}/artifacts/frame`, { headers: caller });
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.alloc(150_000, 8))).toBe(true);
    await write(id, claimed.lease.token, 'complete', {});
    expect((await job(id)).status).toBe('completed');
  });
});

describe('who may work', () => {
  it('a caller credential cannot claim (403), nor can anyone unauthenticated (401)', async () => {
    const asCaller = await call('POST', '/v1/workers/claims', caller, {});
    expect(asCaller.status).toBe(403);
    expect(asCaller.body.detail).toMatch(/WORKERS/);
    expect((await call('POST', '/v1/workers/claims', {}, {})).status).toBe(401);
  });

  it('a worker credential creates nothing and reads nothing over the caller faces', async () => {
    const id = await createJob('resize', { width: 8 });
    const created = await call('POST', '/v1/jobs', worker, { skill: 'resize', input: { width: 1 } });
    expect(created.status).toBe(403);
    expect(created.body.detail).toMatch(/worker's/);
    const sent = await agent
      .as('robot')
      .rpc('SendMessage', { message: skillMessage('resize', { width: 1 }) }, V1);
    expect(sent.body.error).toBeDefined();
    const read = await agent.as('robot').rpc('GetTask', { id }, V1);
    expect(read.body.error?.code).toBe(-32001); // TaskNotFoundError: no task of its own
    expect((await call('GET', `/v1/jobs/${id}`, worker)).status).toBe(404);
    const claimed = await claimTask(id);
    await write(id, claimed.lease.token, 'complete', {});
  });

  it('a credential may hold MAX_WAITING_CLAIMS long polls at once; one more is 429, saying what to do', async () => {
    const hangUp = new AbortController();
    const held = Array.from({ length: 3 }, () =>
      fetch(`${agent.url}/v1/workers/claims`, {
        method: 'POST',
        headers: { ...worker, 'content-type': 'application/json' },
        body: JSON.stringify({ skills: ['resize'], waitMs: 20_000 }),
        signal: hangUp.signal,
      }).catch(() => undefined),
    );
    const refused = await eventually(async () => {
      const res = await claim({ skills: ['resize'], waitMs: 1000 });
      return res.status === 429 ? res : undefined;
    });
    expect(refused.body).toMatchObject({
      reason: 'too-many-claims',
      detail: expect.stringMatching(/MAX_WAITING_CLAIMS/),
    });
    // A look that does not wait is no long poll: still answered.
    expect((await claim({ skills: ['resize'], waitMs: 0 })).status).toBe(200);
    hangUp.abort();
    await Promise.all(held);
    await eventually(async () =>
      (await claim({ skills: ['resize'], waitMs: 10 })).status === 200 ? true : undefined,
    );
  });

  it('claims name remote skills only, and bad bodies are told what to send (never a 5xx)', async () => {
    const local = await claim({ skills: ['local'] });
    expect(local.status).toBe(400);
    expect(local.body.detail).toMatch(/runs in the server, not on workers; remote skills: once, resize/);
    expect((await claim({ skills: ['nope'] })).body.detail).toMatch(/not a skill of this server/);
    for (const bad of [
      { max: 0 },
      { max: 33 },
      { waitMs: -1 },
      { skills: [] },
      { worker: '' },
      { extra: 1 },
      [],
    ]) {
      const { status, body } = await claim(bad);
      expect(status, JSON.stringify(bad)).toBe(400);
      expect(body.detail).toMatch(/^Send \{/);
    }
    const openapi = await call('GET', '/v1/workers/openapi.json', {});
    expect(openapi.body.paths['/v1/workers/claims'].post.requestBody).toBeDefined();
    expect((await call('GET', '/v1/workers/nope', worker)).status).toBe(404);
  });

  it('the metrics count claims, their waits and the writes refused for a lost lease', async () => {
    const res = await fetch(`${agent.url}/metrics`, {
      headers: { Authorization: 'Bearer scrape-me-0123456789' },
    });
    const text = await res.text();
    const value = (series: string) => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('taskhandle_worker_claims_total\\{result="tasks"\\}')).toBeGreaterThan(0);
    expect(value('taskhandle_worker_lease_lost_total')).toBeGreaterThan(0);
    expect(value('taskhandle_worker_claim_wait_seconds_count')).toBeGreaterThan(0);
  });

  it('the in-process skill still runs in the server, beside the remote ones', async () => {
    const id = await createJob('local', {});
    await eventually(async () => ((await job(id)).status === 'completed' ? true : undefined));
    expect((await job(id)).statusMessage).toBe('ran in the server');
  });
});

describe('a worker limited to some skills', () => {
  it("claims only its keys file's skills: all of them by default, and 403 for another", async () => {
    const keysFile = join(folder.dir, 'keys.json');
    const key = newApiKey();
    writeFileSync(
      keysFile,
      JSON.stringify([{ principal: 'gpu', tenant: 'ops', keyHash: hashApiKey(key), skills: ['resize'] }]),
      { mode: 0o600 },
    );
    const limited = await launch({
      env: { SKILLS, BUILTIN_SKILLS: 'none', WORKERS: 'ops/gpu', API_KEYS_FILE: keysFile },
    });
    try {
      const post = async (body: unknown) => {
        const res = await fetch(`${limited.url}/v1/workers/claims`, {
          method: 'POST',
          headers: { 'X-API-Key': key, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Json };
      };
      expect((await post({ skills: ['once'], waitMs: 0 })).body.detail).toBe(
        'This credential may not work the skill "once"',
      );
      expect((await post({ waitMs: 0 })).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});
