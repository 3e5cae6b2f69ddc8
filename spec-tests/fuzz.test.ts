import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, send, skillMessage } from './a2a.js';
import { type FuzzResponse, faceOf, heldRun, isWorkers, violation } from './fuzz/checks.js';
import { fuzzClient } from './fuzz/client.js';
import { aimedAt, type FuzzRequest, fuzzRequest, workers } from './fuzz/requests.js';
import { type Agent, apiKeyHeader, launch, newApiKey } from './harness.js';
import { moduleFolder, TASKHANDLE } from './skill-module.js';

/** Requests per run: FUZZ_RUNS (100000 for the long run), else 5000. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
/** FUZZ_SEED replays a run (its seed is printed first). */
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);
/** Requests in flight at once (one generated batch, sent together). */
const BATCH = 16;
/** Tasks claimed for real and written to with their lease token: one per 50 requests of the run. */
const HELD_RUNS = Math.max(1, Math.ceil(RUNS / 50));

/**
 * A remote skill beside the built-in ones, which the fuzz's worker (robot, WORKERS) claims and
 * works over /v1/workers (docs/workers.md); retried once on a retryable failure.
 */
const SKILLS = moduleFolder('fuzz').write(
  'remote.mjs',
  `import { defineRemoteSkill } from '${TASKHANDLE}';
export const render = defineRemoteSkill({
  id: 'render', description: 'Renders on a worker', input: { type: 'object' },
  pollIntervalMs: 500, ttlMs: 3_600_000, onInterrupt: 'rerun',
  retry: { attempts: 2, backoff: { initialMs: 10, maxMs: 10 } },
});
`,
);

/**
 * Thousands of generated requests over every face (JSON-RPC v1.0 and v0.3, REST both versions with
 * and without a tenant, /v1/jobs, the inbox API, the workers' API, the rest), as callers, a worker,
 * unknown keys and nobody, valid shapes with hostile mutations: no answer is a 5xx, none shows an
 * internal message, every error has its face's documented shape; then hostile writes with real lease
 * tokens; afterwards the server is alive, the tasks made before are unchanged and its stdout is all
 * pino.
 */
describe('fuzz: no input causes a 5xx or shows an internal message', () => {
  let agent: Agent;
  const before: { as: 'alice' | 'bob'; task: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'globex', robot: 'ops' },
      env: {
        SKILLS,
        WORKERS: 'ops/robot',
        MAX_BODY_BYTES: String(32 * 1024),
        // Blocking sends and exports stay short: the fuzz measures answers, not skills.
        BLOCKING_TIMEOUT_MS: '300',
        MAX_ARTIFACT_BYTES: String(256 * 1024),
        MAX_ACTIVE_TASKS: '500',
        SSE_KEEPALIVE_MS: '1000',
        // An owner's cancel of a remote task waits this long for the worker's next heartbeat.
        CANCEL_GRACE_MS: '300',
      },
    });
    for (const as of ['alice', 'bob'] as const) {
      const { task } = await send(agent.as(as), skillMessage('export', { rows: 3 }));
      before.push({ as, task: await getTask(agent.as(as), task.id) });
    }
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** A JSON request of the fuzz's own (making and claiming the tasks it aims at). */
  async function call(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: unknown,
    // biome-ignore lint/suspicious/noExplicitAny: answers are inspected freely in tests
  ): Promise<{ status: number; body: Record<string, any> }> {
    const res = await fetch(`${agent.url}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : {} };
  }

  it(`${RUNS} generated requests: no 5xx, no internal message, every error in its face's shape`, async () => {
    console.log(`fuzz: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}`);
    // The ids of real tasks and their artifacts: paths that reach the download and the task itself.
    const artifactIds = before.flatMap((b) =>
      (b.task.artifacts as { artifactId: string }[]).map((a) => a.artifactId),
    );
    const known = {
      taskIds: [...before.map((b) => String(b.task.id)), ...artifactIds],
      tenants: ['acme', 'globex', 'initech'],
    };
    const client = fuzzClientOf(agent);
    let sent = 0;
    /** Answers per face and status class, printed: a run that only met 401s would prove little. */
    const seen = new Map<string, number>();
    /** The workers' answers by status: a run whose worker requests all stopped at the door would prove little. */
    const workerStatuses = new Map<number | string, number>();
    const started = Date.now();
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fuzzRequest(known), { minLength: BATCH, maxLength: BATCH }),
          async (batch) => {
            const found = await Promise.all(
              batch.map(async (r) => {
                sent++;
                const res: FuzzResponse = await client
                  .send(r)
                  .catch((err: Error) => ({ status: 0, contentType: '', text: err.message }));
                const key = `${faceOf(r)} ${res.hungUp ? 'hung up' : `${Math.floor(res.status / 100)}xx`}`;
                seen.set(key, (seen.get(key) ?? 0) + 1);
                const status = res.hungUp ? 'hung up' : res.status;
                if (isWorkers(r)) workerStatuses.set(status, (workerStatuses.get(status) ?? 0) + 1);
                const why = res.status === 0 && !res.hungUp ? `no answer: ${res.text}` : violation(r, res);
                return (
                  why &&
                  `${why}\n  request: ${replayable(r)}\n  answer: ${res.status} ${res.text.slice(0, 300)}`
                );
              }),
            );
            const first = found.find((f) => f !== undefined);
            if (first) throw new Error(first);
          },
        ),
        { seed: SEED, numRuns: Math.ceil(RUNS / BATCH), endOnFailure: true },
      );
    } finally {
      client.close();
      console.log(`fuzz: ${sent} requests in ${Date.now() - started} ms`);
      console.log(`fuzz: answers ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
      console.log(`fuzz: workers' answers by status ${JSON.stringify(Object.fromEntries(workerStatuses))}`);
    }
  }, 600_000);

  it(`${HELD_RUNS} tasks claimed for real, written to with their lease token: no 5xx, and their owner still reads them`, async () => {
    const known = { taskIds: before.map((b) => String(b.task.id)), tenants: ['acme', 'globex', 'initech'] };
    const client = fuzzClientOf(agent);
    const alice = agent.as('alice').credentials;
    const robot = agent.as('robot').credentials;
    const statuses = new Map<string, number>();
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(workers(known, true), { minLength: 1, maxLength: 12 }),
          fc.boolean(),
          async (writes, together) => {
            const created = await call('POST', '/v1/jobs', alice, { skill: 'render', input: { n: 1 } });
            expect(created.status).toBe(202);
            const id = String(created.body.taskId);
            const token = await claimFor(id);
            const run = heldRun(id, token);
            const one = async (w: FuzzRequest) => {
              const r = aimedAt(w, id, token);
              const res: FuzzResponse = await client
                .send(r)
                .catch((err: Error) => ({ status: 0, contentType: '', text: err.message }));
              const action = /^\/v1\/workers\/jobs\/[^/]+\/(\w+)(\/)?/.exec(r.path);
              const route = r.method === 'PUT' && action?.[2] ? 'upload' : (action?.[1] ?? 'other paths');
              const what = r.path.startsWith('/v1/jobs/')
                ? `${r.as} ${r.method} /v1/jobs`
                : r.method === 'POST' || r.method === 'PUT'
                  ? route
                  : 'other methods';
              const key = `${what} ${res.hungUp ? 'hung up' : res.status}`;
              statuses.set(key, (statuses.get(key) ?? 0) + 1);
              const why =
                res.status === 0 && !res.hungUp
                  ? `no answer: ${res.text}`
                  : (violation(r, res) ?? (together || res.hungUp ? undefined : run.next(r, res)));
              return (
                why &&
                `${why}\n  request: ${replayable(r)}\n  answer: ${res.status} ${res.text.slice(0, 300)}`
              );
            };
            const found: (string | undefined)[] = [];
            if (together) found.push(...(await Promise.all(writes.map(one))));
            else for (const w of writes) found.push(await one(w));
            const first = found.find((f) => f !== undefined);
            if (first) throw new Error(`task ${id}, writes ${together ? 'together' : 'in turn'}: ${first}`);
            // Its owner still reads it, in a state of the lifecycle; then it is ended for good.
            const read = await call('GET', `/v1/jobs/${id}`, alice);
            expect(read.status, JSON.stringify(read.body)).toBe(200);
            expect(read.body).toMatchObject({ taskId: id, state: run.state ?? expect.any(String) });
            await end(id, token);
          },
        ),
        { seed: SEED, numRuns: HELD_RUNS, endOnFailure: true },
      );
    } finally {
      client.close();
      console.log(
        `fuzz: held writes by route and status ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
      );
    }

    /**
     * Ends the task `id` for good: completed while `token` holds it, else claimed again (it was
     * released, or retried) and completed, or canceled by its owner while it waits for an answer.
     */
    async function end(id: string, token: string): Promise<void> {
      let lease = token;
      for (let i = 0; i < 5; i++) {
        await call('POST', `/v1/workers/jobs/${id}/complete`, { ...robot, 'Lease-Token': lease }, {});
        const { body } = await call('GET', `/v1/jobs/${id}`, alice);
        if (['completed', 'failed', 'canceled', 'rejected'].includes(String(body.state))) return;
        if (body.state === 'input-required') {
          expect((await call('DELETE', `/v1/jobs/${id}`, alice)).status).toBe(200);
        } else lease = await claimFor(id);
      }
      throw new Error(`task ${id} could not be ended`);
    }

    /** The lease token of a claim that took the task `id`; other tasks it took are completed. */
    async function claimFor(id: string): Promise<string> {
      for (let i = 0; i < 50; i++) {
        const { status, body } = await call('POST', '/v1/workers/claims', robot, {
          skills: ['render'],
          max: 32,
          waitMs: 0,
        });
        expect(status, JSON.stringify(body)).toBe(200);
        let mine: string | undefined;
        for (const job of body.jobs as { taskId: string; lease: { token: string } }[]) {
          if (job.taskId === id) mine = job.lease.token;
          else
            await call(
              'POST',
              `/v1/workers/jobs/${job.taskId}/complete`,
              { ...robot, 'Lease-Token': job.lease.token },
              {},
            );
        }
        if (mine) return mine;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`task ${id} was never claimed`);
    }
  }, 600_000);

  it('afterwards the server is alive and the tasks made before are unchanged', async () => {
    const health = await fetch(`${agent.url}/healthz`);
    expect(health.status).toBe(200);
    for (const { as, task } of before) {
      expect(await getTask(agent.as(as), String(task.id))).toEqual(task);
    }
  });

  it('every line the server wrote to stdout is a pino record; none is an error', () => {
    expect(agent.logs.filter((l) => 'raw' in l)).toEqual([]);
    const errors = agent.logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
    // The message, and what the record says of its request and error: enough to replay it.
    const told = (e: Record<string, unknown>) =>
      [e.msg, e.method, e.url, (e.err as { message?: unknown } | undefined)?.message]
        .filter((x) => x !== undefined)
        .join(' ');
    expect(errors.map(told)).toEqual([]);
  });
});

/** The fuzz's client, sending as the callers, the worker, an unknown key or nobody. */
function fuzzClientOf(agent: Agent) {
  return fuzzClient(
    agent.url,
    {
      alice: agent.as('alice').credentials,
      bob: agent.as('bob').credentials,
      robot: agent.as('robot').credentials,
      badkey: apiKeyHeader(newApiKey()),
      nobody: {},
    },
    BATCH,
  );
}

/** A request as a reader replays it: method, path, headers (no credentials) and the body's start. */
function replayable(r: FuzzRequest): string {
  const body = r.body === undefined ? '' : ` body(${r.body.length}): ${r.body.slice(0, 400)}`;
  const path = r.path.length > 300 ? `${r.path.slice(0, 300)}...(${r.path.length} chars)` : r.path;
  return `${r.as}: ${r.method} ${path} ${JSON.stringify(r.headers)}${body}`;
}
