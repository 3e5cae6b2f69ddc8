import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Handler, Job, Worker } from '../dist/src/worker/index.js';
import { isProblemError, JobError, type ProblemError, runWorker } from '../dist/src/worker/index.js';
import { rpcStream } from './a2a.js';
import { type Agent, freePort, launch, tempDbPath } from './harness.js';

// biome-ignore lint/suspicious/noExplicitAny: responses are inspected freely in tests
type Json = Record<string, any>;

const SKILLS = fileURLToPath(new URL('./fixtures/remote-skills.mjs', import.meta.url));
const CHILD = fileURLToPath(new URL('./fixtures/worker-child.mjs', import.meta.url));
const NAME = 'test-worker';
const MiB = 1024 * 1024;

/** 3 MiB of bytes that differ from chunk to chunk, made as they are read: never held whole. */
async function* threeMiB(): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < 48; i++) {
    const chunk = new Uint8Array(64 * 1024);
    for (let j = 0; j < chunk.length; j++) chunk[j] = (i * 31 + j * 7) & 0xff;
    yield chunk;
  }
}

async function sha256Of(chunks: AsyncIterable<Uint8Array>): Promise<{ hex: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of chunks) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { hex: hash.digest('hex'), bytes };
}

/** Polls `probe` until it answers something other than undefined (fails after `timeoutMs`). */
async function until<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      throw new Error(`not seen within ${timeoutMs} ms: ${typeof what === 'string' ? what : what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('taskhandle/worker loads nothing of the server', () => {
  it('imports only its own modules, engine/errors.js and node: built-ins', () => {
    const dist = fileURLToPath(new URL('../dist/src/', import.meta.url));
    const seen = new Set<string>();
    const packages = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = readFileSync(file, 'utf8');
      for (const [, spec] of source.matchAll(/^(?:import|export)\s(?:[^'"]*?from\s+)?'([^']+)'/gm)) {
        if (!spec) continue;
        if (spec.startsWith('.')) visit(join(dirname(file), spec));
        else packages.add(spec);
      }
    };
    visit(join(dist, 'worker/index.js'));
    const files = [...seen].map((f) => relative(dist, f)).sort();
    expect(files.filter((f) => !f.startsWith('worker/'))).toEqual(['engine/errors.js']);
    expect(files).toContain('worker/run-worker.js');
    expect([...packages].filter((p) => !p.startsWith('node:'))).toEqual([]);
  });
});

describe('taskhandle/worker: runWorker against the real server', () => {
  let agent: Agent;
  const workers: Worker[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    // LEASE_MS=3000: a heartbeat every second, a dead worker's lease gone in 3 s.
    agent = await launch({ env: { SKILLS, BUILTIN_SKILLS: 'none', LEASE_MS: '3000' } });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  afterAll(() => agent?.stop());

  const api = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`${agent.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Json) : {} };
  };
  const newJob = async (skill: string, input: Json = {}): Promise<string> => {
    const { status, body } = await api('POST', '/v1/jobs', { skill, input });
    expect(status, JSON.stringify(body)).toBe(202);
    return body.taskId as string;
  };
  const jobIn = (id: string, status: string, timeoutMs?: number): Promise<Json> => {
    let last: Json = {};
    return until(
      () => `job ${id} ${status} (last: ${JSON.stringify(last)})`,
      async () => {
        last = (await api('GET', `/v1/jobs/${id}`)).body;
        return last.status === status ? last : undefined;
      },
      timeoutMs,
    );
  };
  const artifactsOf = async (id: string): Promise<Json[]> => {
    const { status, body } = await api('GET', `/v1/jobs/${id}/result`);
    expect(status, JSON.stringify(body)).toBe(200);
    return body.artifacts as Json[];
  };
  /** A worker of this process, stopped after the test; what it reports to onError is kept in `errors`. */
  const worker = (skills: Record<string, Handler>, o: { stopGraceMs?: number } = {}) => {
    const errors: unknown[] = [];
    const w = runWorker({
      url: agent.url,
      name: NAME,
      skills,
      waitMs: 1000,
      stopGraceMs: o.stopGraceMs ?? 500,
      onError: (err) => errors.push(err),
    });
    workers.push(w);
    return { worker: w, errors };
  };

  it('completes a job with its progress, an artifact and a streamed 3 MiB upload', async () => {
    let progressSeen!: () => void;
    const seen = new Promise<void>((resolve) => {
      progressSeen = resolve;
    });
    const written: { note?: string; upload?: { artifactId: string; bytes: number } } = {};
    const { errors } = worker({
      async 'w.files'(job: Job) {
        await job.progress({ percent: 50, message: 'half way' });
        await seen;
        await job.say('writing the files');
        written.note = await job.artifact({
          name: 'note.txt',
          parts: [{ text: 'a note', mediaType: 'text/plain' }],
        });
        written.upload = await job.upload({
          name: 'big.bin',
          filename: 'big.bin',
          mediaType: 'application/octet-stream',
          body: threeMiB(),
        });
        return { message: 'files written' };
      },
    });
    const id = await newJob('w.files');
    const working = await until('progress on the job', async () => {
      const { body } = await api('GET', `/v1/jobs/${id}`);
      return body.progress?.percent === 50 ? body : undefined;
    });
    expect(working.progress).toEqual({ percent: 50, message: 'half way' });
    progressSeen();

    const done = await jobIn(id, 'completed');
    expect(done.statusMessage).toBe('files written');
    expect(written.upload?.bytes).toBe(3 * MiB);

    const res = await fetch(`${agent.url}/v1/jobs/${id}/artifacts/${written.upload?.artifactId}`);
    expect(res.status).toBe(200);
    const downloaded = await sha256Of(res.body as unknown as AsyncIterable<Uint8Array>);
    expect(downloaded).toEqual(await sha256Of(threeMiB()));

    const artifacts = await artifactsOf(id);
    const note = artifacts.find((a) => a.artifactId === written.note);
    expect(note?.parts).toEqual([{ text: 'a note', mediaType: 'text/plain' }]);
    expect(artifacts.map((a) => a.artifactId)).toContain(written.upload?.artifactId);
    expect(errors).toEqual([]);
  });

  it("fails the task with a JobError's message", async () => {
    const { errors } = worker({
      'w.refuse': () => {
        throw new JobError('the text is too short to count', 'too-short');
      },
    });
    const id = await newJob('w.refuse');
    const failed = await jobIn(id, 'failed');
    expect(failed.statusMessage).toContain('the text is too short to count');
    expect(errors).toEqual([]);
  });

  it("fails the task with a generic message for any other error, and tells onError the worker's own", async () => {
    const { errors } = worker({
      'w.crash': async () => {
        throw new Error('could not reach db://admin:hunter2@db');
      },
    });
    const id = await newJob('w.crash');
    const failed = await jobIn(id, 'failed');
    expect(failed.statusMessage).toContain(`an internal error in the worker "${NAME}" (it logged the cause)`);
    expect(JSON.stringify(failed)).not.toContain('hunter2');
    expect(String(errors[0])).toContain('hunter2');
  });

  it('a result the server refuses fails the task at once, with the generic message, and tells onError why', async () => {
    const { errors } = worker({ 'w.overlong': () => ({ message: 'x'.repeat(20_000) }) });
    const id = await newJob('w.overlong');
    const failed = await jobIn(id, 'failed');
    expect(failed.statusMessage).toContain(`an internal error in the worker "${NAME}" (it logged the cause)`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: 'ProblemError', status: 400 });
  });

  it('asks: the task waits for input, and the answer replays the job to completion', async () => {
    const runs: number[] = [];
    worker({
      async 'w.ask'(job: Job) {
        runs.push(job.attempt);
        const answer = await job.ask<string>({
          prompt: 'Which colour?',
          schema: { type: 'string', enum: ['red', 'blue'] },
        });
        return { message: `the colour is ${answer.value}` };
      },
    });
    const id = await newJob('w.ask');
    const waiting = await jobIn(id, 'input_required');
    expect(waiting.statusMessage).toBe('Which colour?');
    expect(runs).toHaveLength(1);

    const answered = await api('POST', `/v1/jobs/${id}:input`, { text: 'blue' });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    const done = await jobIn(id, 'completed');
    expect(done.statusMessage).toBe('the colour is blue');
    expect(runs).toHaveLength(2);
  });

  it("a cancel aborts the job's signal with reason 'cancel', and what the handler returns then is not written", async () => {
    let started = false;
    const reasons: unknown[] = [];
    const { worker: w, errors } = worker({
      async 'w.wait'(job: Job) {
        started = true;
        await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
        reasons.push(job.signal.reason);
        return { message: 'written after the cancel' };
      },
    });
    const id = await newJob('w.wait');
    await until('the job started', () => (started ? true : undefined));
    expect((await api('DELETE', `/v1/jobs/${id}`)).status).toBe(200);
    await until('the signal aborted', () => reasons[0]);
    expect(reasons).toEqual(['cancel']);
    await w.stop(); // every job settled: anything the handler's return wrote is written
    const job = await jobIn(id, 'cancelled');
    expect(job.statusMessage ?? '').not.toContain('written after the cancel');
    expect(errors).toEqual([]);
  });

  it('a worker killed mid-job (SIGKILL): another takes the task over and completes it once, its artifact whole', async () => {
    const child = spawn(process.execPath, [CHILD], {
      env: { ...process.env, TASKHANDLE_URL: agent.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const lines: Json[] = [];
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      lines.push(JSON.parse(line) as Json);
    });
    await until('the child worker ready', () => lines.find((l) => l.event === 'ready'));
    const id = await newJob('w.takeover');
    const doomed = await until('the child working', () => lines.find((l) => l.event === 'working'));
    expect(doomed).toMatchObject({ taskId: id, attempt: 1, interrupted: false });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    const runs: { attempt: number; interrupted: boolean }[] = [];
    worker({
      async 'w.takeover'(job: Job) {
        runs.push({ attempt: job.attempt, interrupted: job.interrupted });
        await job.artifact({ artifactId: 'out', name: 'out.txt', parts: [{ text: 'the whole of it\n' }] });
        return { message: 'taken over' };
      },
    });
    const done = await jobIn(id, 'completed');
    expect(done.statusMessage).toBe('taken over');
    expect(runs).toEqual([{ attempt: 2, interrupted: true }]);
    const artifacts = await artifactsOf(id);
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]).toMatchObject({
      artifactId: 'out',
      name: 'out.txt',
      parts: [{ text: 'the whole of it\n' }],
    });

    // The task's log, replayed from its start: one completion, after the takeover.
    const replay = await rpcStream(agent, 'SubscribeToTask', { id }, { version: '1.0', lastEventId: '0' });
    const states = (await replay.rest())
      .map((e) => e.data.result?.statusUpdate?.status?.state)
      .filter(Boolean);
    expect(states.filter((s) => s === 'TASK_STATE_COMPLETED')).toHaveLength(1);
  });

  it('stop() releases a running job at once: another worker takes it over, as after a restart', async () => {
    let started = false;
    const reasons: unknown[] = [];
    const first = worker(
      {
        async 'w.release'(job: Job) {
          started = true;
          await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
          reasons.push(job.signal.reason);
          throw job.signal.reason;
        },
      },
      { stopGraceMs: 100 },
    );
    const id = await newJob('w.release');
    await until('the job started', () => (started ? true : undefined));

    const runs: { attempt: number; interrupted: boolean }[] = [];
    worker({
      async 'w.release'(job: Job) {
        runs.push({ attempt: job.attempt, interrupted: job.interrupted });
        return { message: 'finished by the second worker' };
      },
    });
    await first.worker.stop();
    expect(reasons).toEqual(['shutdown']);
    const done = await jobIn(id, 'completed');
    expect(done.statusMessage).toBe('finished by the second worker');
    expect(runs).toHaveLength(1);
    expect(first.errors).toEqual([]);
    // Released, not lost: taken over before its lease ran out. The run was stopped midway, so the
    // next one hears it was interrupted (docs/workers.md), though it counts toward no crash loop.
    expect(runs[0]?.interrupted).toBe(true);
  });
});

/** A job of `skill` made over /v1/jobs on the server at `url`: its task id. */
async function postJob(url: string, skill: string): Promise<string> {
  const created = await fetch(`${url}/v1/jobs`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ skill, input: {} }),
  });
  return ((await created.json()) as Json).taskId as string;
}

/** The job once /v1/jobs shows it in `status`. */
const jobOn = (url: string, id: string, status: string): Promise<Json> =>
  until(`job ${id} ${status}`, async () => {
    const job = (await (await fetch(`${url}/v1/jobs/${id}`)).json()) as Json;
    return job.status === status ? job : undefined;
  });

describe('taskhandle/worker: an upload the server refuses midway', () => {
  it('rejects the upload with the 413 problem as soon as the server answers, and the task fails', async () => {
    const server = await launch({ env: { SKILLS, BUILTIN_SKILLS: 'none', MAX_ARTIFACT_BYTES: '1048576' } });
    let refused: unknown;
    let chunksRead = 0;
    const w = runWorker({
      url: server.url,
      skills: {
        async 'w.release'(job: Job) {
          async function* endless(): AsyncGenerator<Uint8Array> {
            for (;;) {
              chunksRead++;
              yield new Uint8Array(64 * 1024);
            }
          }
          try {
            await job.upload({ name: 'big.bin', body: endless() });
          } catch (err) {
            refused = err;
            throw err;
          }
          return { message: 'not reached' };
        },
      },
      waitMs: 1000,
      onError: () => {},
    });
    try {
      const taskId = await postJob(server.url, 'w.release');
      const failed = await jobOn(server.url, taskId, 'failed');
      expect(failed.status).toBe('failed');
      await until('the upload rejected', () => (refused ? true : undefined));
      expect(isProblemError(refused)).toBe(true);
      expect((refused as ProblemError).status).toBe(413);
      // The body stopped being read once the server refused it: an endless body ended.
      const read = chunksRead;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(chunksRead).toBe(read);
    } finally {
      await w.stop();
      await server.stop();
    }
  });
});

describe('taskhandle/worker: the server goes away', () => {
  it('says a server that does not answer is unreachable, and keeps claiming', async () => {
    const errors: unknown[] = [];
    const w = runWorker({
      url: `http://127.0.0.1:${await freePort()}`,
      skills: { 'w.none': async () => ({}) },
      onError: (err) => errors.push(err),
    });
    try {
      // The first claim fails at once; the next comes after the backoff (1 s).
      await until('two failed claims', () => (errors.length >= 2 ? true : undefined));
    } finally {
      await w.stop();
    }
    const err = errors[0] as Error;
    expect(err.name).toBe('NetworkError');
    expect(err.message).toMatch(/^POST \/v1\/workers\/claims: no answer from http:\/\/127\.0\.0\.1:\d+ \(/);
    expect((err.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('a job that ends while its server is down is completed once the server is back, and runs once', async () => {
    const port = String(await freePort());
    const dbPath = tempDbPath();
    // A lease long enough to outlast the restart: the worker's complete lands on the task it holds.
    const env = { SKILLS, BUILTIN_SKILLS: 'none', LEASE_MS: '30000', PORT: port };
    let server = await launch({ env, dbPath });
    let release: () => void = () => {};
    const runs: string[] = [];
    const errors: unknown[] = [];
    const w = runWorker({
      url: server.url,
      skills: {
        async 'w.release'(job: Job) {
          runs.push(job.taskId);
          await new Promise<void>((resolve) => (release = resolve));
          return { message: 'done while the server was away' };
        },
      },
      waitMs: 1000,
      onError: (err) => errors.push(err),
    });
    try {
      const taskId = await postJob(server.url, 'w.release');
      await until('the job started', () => (runs.length ? true : undefined));
      await server.kill9();
      release();
      // The complete fails (no answer), and is tried again after 1, 2 and 4 s.
      server = await launch({ env, dbPath });
      const done = await jobOn(server.url, taskId, 'completed');
      expect(done.statusMessage).toBe('done while the server was away');
      expect(runs).toEqual([taskId]);
      // What failed meanwhile (the claim in flight, perhaps a heartbeat) was a network failure, said so.
      for (const err of errors) expect((err as Error).name).toBe('NetworkError');
    } finally {
      await w.stop();
      await server.stop();
    }
  }, 30_000);
});
