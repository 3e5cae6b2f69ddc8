import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, send, skillMessage } from './a2a.js';
import { faceOf, violation } from './fuzz/checks.js';
import { fuzzClient } from './fuzz/client.js';
import { type FuzzRequest, fuzzRequest } from './fuzz/requests.js';
import { type Agent, apiKeyHeader, launch, newApiKey } from './harness.js';

/** Requests per run: FUZZ_RUNS (100000 for the long run), else 5000. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
/** FUZZ_SEED replays a run (its seed is printed first). */
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);
/** Requests in flight at once (one generated batch, sent together). */
const BATCH = 16;

/**
 * Thousands of generated requests over every face (JSON-RPC v1.0 and v0.3, REST both versions with
 * and without a tenant, /v1/jobs, the inbox API, the rest), valid shapes with hostile mutations: no
 * answer is a 5xx, none shows an internal message, every error has its face's documented shape;
 * afterwards the server is alive, the tasks made before are unchanged and its stdout is all pino.
 */
describe('fuzz: no input causes a 5xx or shows an internal message', () => {
  let agent: Agent;
  const before: { as: 'alice' | 'bob'; task: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    agent = await launch({
      apiKeys: { alice: 'acme', bob: 'globex' },
      env: {
        MAX_BODY_BYTES: String(32 * 1024),
        // Blocking sends and exports stay short: the fuzz measures answers, not skills.
        BLOCKING_TIMEOUT_MS: '300',
        MAX_ARTIFACT_BYTES: String(256 * 1024),
        MAX_ACTIVE_TASKS: '500',
        SSE_KEEPALIVE_MS: '1000',
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
    const client = fuzzClient(
      agent.url,
      {
        alice: agent.as('alice').credentials,
        bob: agent.as('bob').credentials,
        badkey: apiKeyHeader(newApiKey()),
        nobody: {},
      },
      BATCH,
    );
    let sent = 0;
    /** Answers per face and status class, printed: a run that only met 401s would prove little. */
    const seen = new Map<string, number>();
    const started = Date.now();
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fuzzRequest(known), { minLength: BATCH, maxLength: BATCH }),
          async (batch) => {
            const found = await Promise.all(
              batch.map(async (r) => {
                sent++;
                const res = await client
                  .send(r)
                  .catch((err: Error) => ({ status: 0, contentType: '', text: err.message }));
                const key = `${faceOf(r)} ${Math.floor(res.status / 100)}xx`;
                seen.set(key, (seen.get(key) ?? 0) + 1);
                const why = res.status === 0 ? `no answer: ${res.text}` : violation(r, res);
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
    expect(errors.map((e) => e.msg)).toEqual([]);
  });
});

/** A request as a reader replays it: method, path, headers (no credentials) and the body's start. */
function replayable(r: FuzzRequest): string {
  const body = r.body === undefined ? '' : ` body(${r.body.length}): ${r.body.slice(0, 400)}`;
  const path = r.path.length > 300 ? `${r.path.slice(0, 300)}...(${r.path.length} chars)` : r.path;
  return `${r.as}: ${r.method} ${path} ${JSON.stringify(r.headers)}${body}`;
}
