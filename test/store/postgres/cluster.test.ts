import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from '../../../spec-tests/postgres.js';
import { tenantOf } from '../../../src/auth/principal.js';
import type { Engine } from '../../../src/engine/engine.js';
import type { StoreChange } from '../../../src/engine/store-port.js';
import { MIGRATIONS } from '../../../src/store/postgres/migrations.js';
import { PostgresStore } from '../../../src/store/postgres/postgres-store.js';
import {
  call,
  type Harness,
  harnessOver,
  logger,
  OWNER,
  submit,
  textOf,
  waitForState,
} from '../../engine-harness.js';
import { waitFor } from '../../helpers.js';
import { type TestSkills, testSkills } from '../../test-skills.js';
import { newTask, T0 } from '../contract/context.js';

/** One instance of a cluster: its own store connection, hub, engine and (on demand) runner. */
type Instance = Harness<PostgresStore>;

let t: TestSkills;
let schema: string;
const open: Instance[] = [];

async function instance(): Promise<Instance> {
  const store = await PostgresStore.open({ url: postgresUrl, schema, poolMax: 5, logger });
  const node = harnessOver(store, {
    skills: t.skills,
    defaultSkill: 'quick',
    cancelGraceMs: 60_000,
    engine: { tenantOf },
  });
  open.push(node);
  return node;
}

const noPostgres = await skipWithoutPostgres();

describe.skipIf(noPostgres !== undefined)('engines of several instances on one PostgreSQL schema', () => {
  beforeEach(() => {
    t = testSkills();
    schema = freshSchema();
  });
  afterEach(async () => {
    t.stubbornGate.resolve();
    t.shortGate.resolve();
    await Promise.all(open.splice(0).map((n) => n.close()));
    await dropSchema(schema);
  });

  it('instances that migrate at the same moment make the schema once', async () => {
    const nodes = await Promise.all([instance(), instance(), instance()]);
    const id = await submit(nodes[0]?.engine as Engine, call('quick', { text: 'x' }));
    expect((await nodes[2]?.engine.get(OWNER, id))?.record.id).toBe(id);
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    const { rows } = await client.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
    await client.end();
    expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
  });

  it('a stream on B follows a job that runs on A, every event once and in order', async () => {
    const [a, b] = [await instance(), await instance()];
    const id = await submit(a.engine, call('short', {}));
    a.startRunner();
    await t.jobStarted(id);
    const controller = new AbortController();
    const seen: number[] = [];
    const following = (async () => {
      for await (const item of b.engine.stream(OWNER, id, { signal: controller.signal })) {
        seen.push(item.kind === 'task' ? item.seq : item.entry.seq);
      }
    })();
    await waitFor(
      () => seen.length > 0 || undefined,
      () => 'the stream on B to start',
    );
    t.shortGate.resolve();
    await following;
    const record = await b.store.getTask(id, Date.now());
    expect(record?.state).toBe('completed');
    // The snapshot's seq, then each later event exactly once.
    const first = seen[0] ?? 0;
    expect(seen).toEqual(Array.from({ length: (record?.lastSeq ?? 0) - first + 1 }, (_, i) => first + i));
  });

  // These two would pass late without the notices (a wait re-reads at its end, a lease renewal sees
  // the cancel): their waits outlast the test's own timeout, so only a notice can end them in time.
  it('a blocking wait on B ends when A finishes the job; B hears it', { timeout: 10_000 }, async () => {
    const [a, b] = [await instance(), await instance()];
    const id = await submit(a.engine, call('short', {}));
    a.startRunner();
    await t.jobStarted(id);
    const heard: string[] = [];
    b.engine.onStatus((taskId, state) => taskId === id && heard.push(state));
    const waiting = b.engine.waitUntil(id, (s) => s === 'completed', 60_000);
    t.shortGate.resolve();
    expect((await waiting).state).toBe('completed');
    // B's status listeners (the approvals inbox's live list) hear A's transitions too.
    await waitFor(
      () => heard.includes('completed') || undefined,
      () => `B's status listener to hear completed (heard ${heard.join(', ')})`,
    );
  });

  it('a cancel on B aborts the job running on A at once', { timeout: 10_000 }, async () => {
    const [a, b] = [await instance(), await instance()];
    const id = await submit(a.engine, call('waits', {}));
    a.startRunner({ leaseMs: 600_000 });
    await t.jobStarted(id);
    const view = await b.engine.cancel(OWNER, id);
    expect(view.record.state).toBe('canceled');
    expect(textOf(view.record.statusMessage)).toBe('Canceled by request');
    expect(t.reasons.get(id)).toBe('cancel');
  });

  it('runners on two instances run every task exactly once', async () => {
    const [a, b] = [await instance(), await instance()];
    const ids = await Promise.all(
      Array.from({ length: 24 }, (_, i) => submit(i % 2 ? a.engine : b.engine, call('counted', { ms: 20 }))),
    );
    a.startRunner({ concurrency: 3 });
    b.startRunner({ concurrency: 3 });
    for (const id of ids) await waitForState(a.engine, id, 'completed', 15_000);
    expect(t.runs('counted')).toBe(ids.length);
    for (const id of ids) expect(t.maxActive.get(id)).toBe(1);
  });

  it('B takes over a task whose runner on A died, once its lease expired', async () => {
    const [a, b] = [await instance(), await instance()];
    const id = await submit(a.engine, call('quick', { text: 'again' }));
    // A's runner claimed it and died: a short lease that nobody renews.
    const [dead] = await a.store.claim('dead-worker', Date.now(), 150, 10);
    expect(dead?.record.id).toBe(id);
    b.startRunner();
    const done = await waitForState(b.engine, id, 'completed');
    expect(done).toMatchObject({ attempts: 2, interruptions: 1 });
    expect(textOf(done.statusMessage)).toBe('done: again');
  });

  it('the limit on unfinished tasks holds for creates racing on several instances', async () => {
    const nodes = [await instance(), await instance()];
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        nodes[i % 2]?.store.createTask(newTask({ owner: 'racer', createdAt: T0, maxActive: 5 })),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(refused.map((e: { name?: string }) => e.name)).toEqual(Array(15).fill('TooManyTasks'));
  });

  it('turns of creates racing on two instances with the same message ids make each task once', async () => {
    const nodes = [await instance(), await instance()];
    for (let round = 0; round < 5; round++) {
      // Each instance sends the ids of its turn in its own order: one statement each, racing.
      const ids = Array.from({ length: 16 }, (_, i) => `r${round}-m${i}`);
      const turns = nodes.map((node, n) =>
        Promise.all(
          (n === 0 ? ids : [...ids].reverse()).map((messageId) =>
            node.store.createTask(newTask({ owner: 'racer', messageId })),
          ),
        ),
      );
      const [a, b] = await Promise.all(turns);
      const answers = [...(a ?? []), ...[...(b ?? [])].reverse()];
      for (let i = 0; i < ids.length; i++) {
        const mine = answers[i];
        const theirs = answers[i + ids.length];
        // Both answer the same task, and exactly one of them made it.
        expect(mine?.result.record.id).toBe(theirs?.result.record.id);
        expect([mine?.created, theirs?.created].filter(Boolean)).toHaveLength(1);
      }
    }
    const page = await nodes[0]?.store.listTasks({ owner: 'racer', now: T0, pageSize: 100 });
    expect(page?.totalSize).toBe(80);
  });

  it('the same message sent to both instances at once makes one task', async () => {
    const nodes = [await instance(), await instance()];
    const messageId = randomUUID();
    const ids = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        submit(nodes[i % 2]?.engine as Engine, { ...call('quick', { text: 'once' }), messageId }),
      ),
    );
    expect(new Set(ids).size).toBe(1);
  });

  describe('fair claims and limits across instances', () => {
    const ALICE = 'api-key:acme/alice';
    const CAROL = 'api-key:acme/carol';
    const BOB = 'api-key:globex/bob';
    const flood = (engine: Engine, owner: string, n: number) =>
      Promise.all(Array.from({ length: n }, () => submit(engine, call('waits', {}), owner)));
    const running = (ids: readonly string[]) => ids.filter((id) => t.started.has(id));
    /** Lets every runner claim a few more times: what they did not start by then, they will not. */
    const settle = () => sleep(250);

    it("a flood by one tenant on A does not delay another tenant's task on B beyond the next free slot", async () => {
      const [a, b] = [await instance(), await instance()];
      const flooded = await flood(a.engine, ALICE, 30);
      a.startRunner({ concurrency: 4, leaseMs: 600_000 });
      b.startRunner({ concurrency: 4, leaseMs: 600_000 });
      await waitFor(
        () => running(flooded).length === 8 || undefined,
        () => `8 of acme's jobs to run (${running(flooded).length} do)`,
      );
      const [late] = await flood(b.engine, BOB, 1);
      await settle();
      expect(t.started.has(late as string)).toBe(false);
      // One slot frees: it goes to globex, not to acme's next of 22 queued tasks.
      await a.engine.cancel(ALICE, running(flooded)[0] as string);
      await t.jobStarted(late as string);
      await settle();
      expect(running(flooded)).toHaveLength(7);
      expect((await b.engine.record(BOB, late as string)).tenant).toBe('api-key:globex');
    });

    it('a skill limit and a tenant limit hold under claims racing on two instances', async () => {
      const [a, b] = [await instance(), await instance()];
      const policy = { skillLimits: { waits: 5 }, tenantLimit: 3 };
      const alices = await flood(a.engine, ALICE, 10);
      const carols = await flood(b.engine, CAROL, 10);
      const bobs = await flood(a.engine, BOB, 10);
      for (const node of [a, b]) {
        for (let i = 0; i < 3; i++)
          node.startRunner({ concurrency: 4, leaseMs: 600_000, claimPolicy: policy });
      }
      await waitFor(
        () => t.started.size === 5 || undefined,
        () => `5 jobs to run (${t.started.size} do)`,
      );
      await settle();
      const acme = [...running(alices), ...running(carols)];
      expect(t.started.size).toBe(5);
      expect(acme).toHaveLength(3);
      expect(running(bobs)).toHaveLength(2);
      // A slot of acme's frees: whoever takes it, every limit still holds.
      const done = acme[0] as string;
      await a.engine.cancel(alices.includes(done) ? ALICE : CAROL, done);
      await waitFor(
        () => t.started.size === 5 || undefined,
        () => `a fifth job to run again (${t.started.size} do)`,
      );
      await settle();
      expect(t.started.size).toBe(5);
      expect([...running(alices), ...running(carols)].length).toBeLessThanOrEqual(3);
      expect(running(bobs).length).toBeLessThanOrEqual(3);
    });
  });

  it('after its listening connection is cut, an instance says so, reconnects and hears again', async () => {
    const [a, b] = [await instance(), await instance()];
    const heard: StoreChange[] = [];
    b.store.watch((change) => heard.push(change));
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    try {
      // Cut every connection that listens on this cluster's channel (B's and A's feeds).
      const cut = await admin.query(
        `SELECT pg_terminate_backend(l.pid) FROM pg_stat_activity l
          WHERE l.query = $1 AND l.datname = current_database()`,
        [`LISTEN "taskhandle_${schema}"`],
      );
      expect(cut.rowCount).toBe(2);
    } finally {
      await admin.end();
    }
    await waitFor(
      () => heard.find((c) => c.kind === 'missed'),
      () => 'B to report that it may have missed changes',
    );
    const id = await submit(a.engine, call('quick', {}));
    a.startRunner();
    await waitFor(
      () => heard.find((c) => c.kind === 'events' && c.taskId === id && c.state === 'completed'),
      () => `B to hear that ${id} completed (heard ${JSON.stringify(heard)})`,
    );
  });
});
