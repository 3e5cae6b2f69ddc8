import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, send, skillMessage } from './a2a.js';

import { type FuzzResponse, faceOf, heldRun, isWorkers, leakIn, violation } from './fuzz/checks.js';
import { fuzzClient, grpcTaskRequest, grpcUnary, sendRaw } from './fuzz/client.js';
import {
  type AnonymousKnown,
  type HostCase,
  hostCase,
  hostValue,
  hostViolation,
  NAMES,
  type Named,
  type Names,
  verdictOf,
} from './fuzz/hosts.js';
import {
  claimOps,
  claimRun,
  type LimitsServer,
  pushOps,
  pushRun,
  streamOps,
  streamRun,
} from './fuzz/limits.js';
import { aimedAt, type FuzzRequest, fuzzRequest, workers } from './fuzz/requests.js';
import { grpcInterface } from './grpc.js';
import { type Agent, apiKeyHeader, freePort, launch, newApiKey } from './harness.js';
import { moduleFolder, TASKHANDLE } from './skill-module.js';

/** Requests per run: FUZZ_RUNS (100000 for the long run), else 5000. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
/** FUZZ_SEED replays a run (its seed is printed first). */
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);
/** Requests in flight at once (one generated batch, sent together). */
const BATCH = 16;
/** Tasks claimed for real and written to with their lease token: one per 50 requests of the run. */
const HELD_RUNS = Math.max(1, Math.ceil(RUNS / 50));
/** Requests with generated Host and Origin headers to the anonymous server: one per 20 of the run. */
const HOST_RUNS = Math.max(BATCH, Math.ceil(RUNS / 20));
/** gRPC calls with a generated :authority: one per 250 requests of the run. */
const AUTHORITY_RUNS = Math.max(4, Math.ceil(RUNS / 250));
/** Runs of each bound's operations (streams, webhooks, waiting claims): one per 2,500 requests. */
const LIMIT_RUNS = Math.max(2, Math.ceil(RUNS / 2500));
/** A webhook the fuzz's server accepts (PUSH_ALLOW) and never calls: the bounds set them on an ended task. */
const HOOK = 'http://127.0.0.2:9/hook';

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
export const paint = defineRemoteSkill({
  id: 'paint', description: 'Never asked for: its claims only wait', input: { type: 'object' },
  pollIntervalMs: 500, ttlMs: 3_600_000, onInterrupt: 'rerun',
});
`,
);

/** Bodies and waits the fuzz's servers are launched with: the fuzz measures answers, not skills. */
const QUICK = {
  MAX_BODY_BYTES: String(32 * 1024),
  // Blocking sends and exports stay short.
  BLOCKING_TIMEOUT_MS: '300',
  MAX_ARTIFACT_BYTES: String(256 * 1024),
  MAX_ACTIVE_TASKS: '500',
  SSE_KEEPALIVE_MS: '1000',
};

/**
 * Thousands of generated requests over every face (JSON-RPC v1.0 and v0.3, REST both versions with
 * and without a tenant, /v1/jobs, the inbox API, the workers' API, the rest), as callers, a worker,
 * unknown keys and nobody, valid shapes with hostile mutations: no answer is a 5xx, none shows an
 * internal message, every error has its face's documented shape; then hostile writes with real lease
 * tokens; then Host and Origin headers of every kind to a second server, an anonymous one on
 * loopback (the DNS rebinding rule); then a principal driven past small MAX_STREAMS,
 * MAX_PUSH_CONFIGS and MAX_WAITING_CLAIMS; afterwards both servers are alive, the tasks made before
 * are unchanged and their stdout is all pino.
 */
describe('fuzz: no input causes a 5xx or shows an internal message', () => {
  let agent: Agent;
  /** The anonymous server on loopback, where the DNS rebinding rule applies; `url` is its own address. */
  let anonymous: { agent: Agent; url: string; grpc: string; names: Names; known: AnonymousKnown };
  const before: { as: 'alice' | 'bob'; task: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    let names: Names = { ...NAMES, port: 0 };
    let grpcPort = 0;
    /**
     * The anonymous server, on ports picked first (its PUBLIC_URL names its port); picked again if
     * another process took one meanwhile.
     */
    const launchAnonymous = async (attempt = 1): Promise<Agent> => {
      const port = await freePort();
      do grpcPort = await freePort();
      while (grpcPort === port);
      names = { ...NAMES, port };
      try {
        return await launch({
          env: {
            SKILLS,
            ...QUICK,
            PORT: String(port),
            PUBLIC_URL: `http://${names.publicHost}:${port}`,
            ALLOWED_HOSTS: names.allowedHost,
            MCP_ALLOWED_ORIGINS: names.mcpOrigin,
            GRPC_PORT: String(grpcPort),
          },
        });
      } catch (err) {
        if (attempt >= 3) throw err;
        return launchAnonymous(attempt + 1);
      }
    };
    let anonymousAgent: Agent;
    [agent, anonymousAgent] = await Promise.all([
      launch({
        // carol is driven to the bounds, olga an operator beside her (its streams its own), robin a worker.
        apiKeys: { alice: 'acme', bob: 'globex', robot: 'ops', carol: 'umbrella', olga: 'ops', robin: 'ops' },
        env: {
          SKILLS,
          WORKERS: 'ops/robot,ops/robin',
          OPERATORS: 'ops/olga',
          ...QUICK,
          // An owner's cancel of a remote task waits this long for the worker's next heartbeat.
          CANCEL_GRACE_MS: '300',
          // Small bounds, reached by the fuzz's callers now and then and driven past on purpose.
          MAX_STREAMS: '2',
          MAX_PUSH_CONFIGS: '2',
          MAX_WAITING_CLAIMS: '2',
          PUSH_ALLOW: '127.0.0.2/32',
          GRPC_PORT: '0',
        },
      }),
      // Its public URL, listed host and MCP origin are names the rule must serve besides loopback.
      launchAnonymous(),
    ]);
    // The tasks made before, on both servers at once: the fuzz's callers', and one of the anonymous
    // server's with its artifact.
    const url = `http://127.0.0.1:${names.port}`;
    const [, known] = await Promise.all([
      Promise.all(
        (['alice', 'bob'] as const).map(async (as) => {
          const { task } = await send(agent.as(as), skillMessage('export', { rows: 3 }));
          before.push({ as, task: await getTask(agent.as(as), task.id) });
        }),
      ),
      (async (): Promise<AnonymousKnown> => {
        const job = await fetch(`${url}/v1/jobs`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Prefer: 'wait=10' },
          body: JSON.stringify({ skill: 'export', input: { rows: 1 } }),
        });
        const { taskId } = (await job.json()) as { taskId: string };
        const task = await fetch(`${url}/`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } }),
        });
        const { result } = (await task.json()) as { result: { artifacts: { artifactId: string }[] } };
        return { taskId, artifactId: result.artifacts[0]?.artifactId ?? '' };
      })(),
    ]);
    before.sort((a, b) => a.as.localeCompare(b.as));
    anonymous = { agent: anonymousAgent, url, grpc: `127.0.0.1:${grpcPort}`, names, known };
  });
  afterAll(async () => {
    await Promise.all([agent?.stop(), anonymous?.agent.stop()]);
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

  it(`${HOST_RUNS} requests with generated Host and Origin headers to an anonymous server: a foreign one is refused 403 naming the setting, an own one served`, async () => {
    const { url, names, known } = anonymous;
    const fuzz = { taskIds: [known.taskId, known.artifactId], tenants: ['acme', 'globex', 'initech'] };
    const local = { alice: {}, bob: {}, robot: {}, badkey: {}, nobody: {}, local: {} };
    const client = fuzzClient(url, local, BATCH);
    /** Answers by verdict, face and status: a run whose foreign hosts all met 404s would prove little. */
    const seen = new Map<string, number>();
    const tally = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(hostCase(names, known, fuzz), { minLength: BATCH, maxLength: BATCH }),
          async (batch) => {
            const found = await Promise.all(
              batch.map(async (c: HostCase) => {
                const res: FuzzResponse = await (c.wire
                  ? sendRaw(url, c.request, c.wire, {})
                  : client.send(c.request)
                ).catch((err: Error) => ({ status: 0, contentType: '', text: err.message }));
                const verdict = c.unparsable ? 'unparsable' : verdictOf(c);
                const what = c.face ?? (c.wire ? 'raw' : `mutated ${faceOf(c.request)}`);
                tally(seen, `${verdict} ${what} ${res.hungUp ? 'hung up' : res.status}`);
                const why =
                  res.status === 0 && !res.hungUp ? `no answer: ${res.text}` : hostViolation(c, res);
                return (
                  why &&
                  `${why}\n  request: ${replayable(c.request)}${c.wire ? ` sent as ${JSON.stringify(c.wire)}` : ''}` +
                    `\n  host ${JSON.stringify(c.host)} origin ${JSON.stringify(c.origin)} (${verdict})` +
                    `\n  answer: ${res.status} ${res.text.slice(0, 300)}`
                );
              }),
            );
            const first = found.find((f) => f !== undefined);
            if (first) throw new Error(first);
          },
        ),
        { seed: SEED, numRuns: Math.ceil(HOST_RUNS / BATCH), endOnFailure: true },
      );
    } finally {
      client.close();
      console.log(`fuzz: Host and Origin answers ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
    }
  }, 600_000);

  it(`${AUTHORITY_RUNS} gRPC calls with a generated :authority: a foreign one is PERMISSION_DENIED naming ALLOWED_HOSTS, an own one served`, async () => {
    const { grpc, names, known } = anonymous;
    const codes = new Map<string, number>();
    /** Why the answer to a call with `authority` breaks the rule; undefined when it keeps it. */
    const check = async (authority: Named): Promise<string | undefined> => {
      const outcome = await grpcUnary(grpc, '/lf.a2a.v1.A2AService/GetTask', grpcTaskRequest(known.taskId), {
        authority: authority.value,
      });
      const key = `${authority.is} ${outcome?.code ?? 'not sent'}`;
      codes.set(key, (codes.get(key) ?? 0) + 1);
      // A value grpc-js will not send as an authority proves nothing here.
      if (!outcome) return undefined;
      const told = `:authority ${JSON.stringify(authority.value)} (${authority.is}) answered ${outcome.code} ${outcome.details}`;
      // Nor one HTTP/2 refuses as a header value (PROTOCOL_ERROR): it never reaches a face.
      if (/[^\w.:[\]-]/.test(authority.value) && /RST_STREAM with code 1\b/.test(outcome.details))
        return undefined;
      if (leakIn(outcome.details)) return `an internal message: ${told}`;
      // Neither UNKNOWN nor INTERNAL: the rule's refusal, the task, or another refusal in words.
      if (outcome.code === 2 || outcome.code === 13) return `UNKNOWN or INTERNAL: ${told}`;
      if (authority.is === 'foreign' && !(outcome.code === 7 && /ALLOWED_HOSTS/.test(outcome.details)))
        return `not PERMISSION_DENIED naming ALLOWED_HOSTS: ${told}`;
      if (authority.is === 'own' && outcome.code !== 0) return `an own authority was not served: ${told}`;
      return undefined;
    };
    await fc.assert(
      fc.asyncProperty(fc.array(hostValue(names), { minLength: 4, maxLength: 4 }), async (authorities) => {
        const first = (await Promise.all(authorities.map(check))).find((f) => f !== undefined);
        if (first) throw new Error(first);
      }),
      { seed: SEED, numRuns: Math.ceil(AUTHORITY_RUNS / 4), endOnFailure: true },
    );
    console.log(`fuzz: gRPC statuses by :authority ${JSON.stringify(Object.fromEntries([...codes].sort()))}`);
  }, 600_000);

  it(`${LIMIT_RUNS} runs each driving a principal past MAX_STREAMS, MAX_PUSH_CONFIGS and MAX_WAITING_CLAIMS: refused in each face's shape naming the setting; a closed stream, a deleted webhook, a dropped claim give their place back`, async () => {
    const owner = agent.as('carol').credentials;
    const ended = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      headers: { ...owner, 'Content-Type': 'application/json', Prefer: 'wait=10' },
      body: JSON.stringify({ skill: 'export', input: { rows: 1 } }),
    });
    const server: LimitsServer = {
      url: agent.url,
      grpc: (await grpcInterface(agent))?.url ?? '',
      owner,
      operator: agent.as('olga').credentials,
      worker: agent.as('robin').credentials,
      otherWorker: agent.as('robot').credentials,
      endedTask: String(((await ended.json()) as { taskId: string }).taskId),
    };
    const seen = new Map<string, number>();
    const findings = new Map<string, number>();
    const tally = (m: Map<string, number>, keys: string[]) => {
      for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
    };
    const check = <T>(
      name: string,
      ops: fc.Arbitrary<T[]>,
      run: (ops: T[]) => ReturnType<typeof streamRun>,
    ) =>
      fc.assert(
        fc.asyncProperty(ops, async (o) => {
          const report = await run(o);
          tally(
            seen,
            report.seen.map((s) => `${name}: ${s}`),
          );
          tally(findings, report.known);
          if (report.why) throw new Error(`${name}: ${report.why}`);
        }),
        { seed: SEED, numRuns: LIMIT_RUNS, endOnFailure: true },
      );
    try {
      // Three principals' bounds, one of each at once; each runs to its end before any failure shows.
      const outcomes = await Promise.allSettled([
        check('streams', streamOps, (o) => streamRun(server, o)),
        check('webhooks', pushOps, (o) => pushRun(server, o, HOOK)),
        check('claims', claimOps, (o) => claimRun(server, o, 'paint')),
      ]);
      for (const o of outcomes) if (o.status === 'rejected') throw o.reason;
    } finally {
      console.log(`fuzz: bounds' answers ${JSON.stringify(Object.fromEntries([...seen].sort()))}`);
      console.log(`fuzz: reported findings met ${JSON.stringify(Object.fromEntries(findings))}`);
    }
  }, 600_000);

  it('afterwards both servers are alive and the tasks made before are unchanged', async () => {
    const health = await fetch(`${agent.url}/healthz`);
    expect(health.status).toBe(200);
    expect((await fetch(`${anonymous.url}/healthz`)).status).toBe(200);
    for (const { as, task } of before) {
      expect(await getTask(agent.as(as), String(task.id))).toEqual(task);
    }
  });

  it('every line the servers wrote to stdout is a pino record; none is an error', () => {
    for (const logs of [agent.logs, anonymous.agent.logs]) {
      expect(logs.filter((l) => 'raw' in l)).toEqual([]);
      const errors = logs.filter((l) => typeof l.level === 'number' && l.level >= 50);
      // The message, and what the record says of its request and error: enough to replay it.
      const told = (e: Record<string, unknown>) =>
        [e.msg, e.method, e.url, (e.err as { message?: unknown } | undefined)?.message]
          .filter((x) => x !== undefined)
          .join(' ');
      expect(errors.map(told)).toEqual([]);
    }
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
      local: {},
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
