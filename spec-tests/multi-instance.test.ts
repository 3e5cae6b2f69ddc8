import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { base64url, createLocalJWKSet, flattenedVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  artifactText,
  CSV_HEADER,
  csvLines,
  eventually,
  getTask,
  rpcStream,
  send,
  skillMessage,
  startTask,
  V1,
} from './a2a.js';
import { type Cluster, startCluster } from './cluster.js';
import type { Agent } from './harness.js';
import { skipWithoutPostgres } from './postgres.js';
import type { SseEvent } from './sse.js';
import { type Received, type Receiver, startReceiver, tokenClaims } from './webhook-receiver.js';

/**
 * Several server processes on one PostgreSQL schema, as one service behind a load balancer: any
 * instance answers for any task, wherever its job runs.
 */
const noPostgres = await skipWithoutPostgres();

const RERUN = 'Interrupted by a restart; running again';
const NOT_RERUN = 'Interrupted by a restart; this skill is not re-run automatically';
/** Long enough that only the job's real abort can make a cancel fast. */
const CANCEL_GRACE_MS = 20_000;
const PUSH = {
  PUSH_ALLOW: '127.0.0.0/8',
  PUSH_RETRY_MS: '50',
  PUSH_RETRY_MAX_MS: '200',
  PUSH_TIMEOUT_MS: '500',
  PUSH_POLL_MS: '100',
};
/** Jobs still running when a cluster is closed are released at once, not waited for. */
const QUICK_STOP = { SHUTDOWN_TIMEOUT_MS: '300' };

const ids = (events: SseEvent[]) => events.map((e) => Number(e.id));
const consecutive = (ns: number[]) => ns.every((n, i) => n === (ns[0] ?? 0) + i);
// biome-ignore lint/suspicious/noExplicitAny: events are inspected freely in tests
const result = (e: SseEvent | undefined): any => e?.data.result;
const slowExport = (rows: number) => skillMessage('export', { rows, chunkRows: 1, delayMs: 150 });
const texts = (task: { history?: { parts: { text?: string }[] }[] }) =>
  (task.history ?? []).map((m) => m.parts.map((p) => p.text ?? '').join(''));

/** The task's whole log, replayed from the start on `agent`. */
const replayAll = async (agent: Agent, id: string): Promise<SseEvent[]> =>
  (await rpcStream(agent, 'SubscribeToTask', { id }, { ...V1, lastEventId: '0' })).rest();

/** How many tasks the caller has (ListTasks' totalSize). */
async function taskCount(agent: Agent, contextId?: string): Promise<number> {
  const { body } = await agent.rpc('ListTasks', { contextId, pageSize: 1, historyLength: 0 }, V1);
  return body.result.totalSize;
}

describe.skipIf(noPostgres !== undefined)('several instances on one PostgreSQL schema', () => {
  /**
   * A, B and C on one schema. B and C run one job at a time and each holds a long sleep, so every
   * job started below runs on A: each test knows which instance runs its job, without guessing.
   */
  let cluster: Cluster;
  let a: Agent;
  let b: Agent;
  let c: Agent;
  const blockers: string[] = [];
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    const env = { ...PUSH, ...QUICK_STOP, CANCEL_GRACE_MS: String(CANCEL_GRACE_MS), RUNNER_CONCURRENCY: '1' };
    // B and C start at once on the fresh schema, as a deploy starts them.
    cluster = await startCluster(2, { env, apiKeys: { alice: 'acme' } });
    [b, c] = cluster.agents as [Agent, Agent];
    // The first sleep fills one of them; the second can only go to the other.
    for (let i = 0; i < 2; i++) {
      const blocker = await startTask(b, skillMessage('sleep', { seconds: 600 }));
      await b.waitForState(blocker.id, 'TASK_STATE_WORKING');
      blockers.push(blocker.id);
    }
    a = await cluster.add({ RUNNER_CONCURRENCY: '16' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(blockers.map((id) => a?.rpc('CancelTask', { id }, V1)));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
    await cluster?.close();
  });

  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  it('a task created on A is polled on B and streamed live on C: every event, in order, ids without gaps', async () => {
    const task = await startTask(a, slowExport(6));
    const polled = await getTask(b, task.id);
    expect(polled).toMatchObject({ id: task.id, contextId: task.contextId });
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(polled.status.state);

    const live = await rpcStream(c, 'SubscribeToTask', { id: task.id }, V1);
    const events = await live.rest();
    const [snapshot, ...updates] = events;
    expect(Object.keys(result(snapshot))).toEqual(['task']);
    expect(result(snapshot).task.status.state).not.toBe('TASK_STATE_COMPLETED');
    expect(consecutive(ids(events))).toBe(true);
    expect(result(updates.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    // What C streamed live is the log A wrote, from C's snapshot on, none left out.
    const log = await replayAll(a, task.id);
    const after = Number(snapshot?.id);
    expect(updates.map((e) => [e.id, result(e)])).toEqual(
      log.filter((e) => Number(e.id) > after).map((e) => [e.id, result(e)]),
    );
    expect(updates.filter((e) => result(e).artifactUpdate).length).toBeGreaterThan(0);

    const done = await b.waitForState(task.id, 'TASK_STATE_COMPLETED');
    expect(done.status.message.parts).toEqual([{ text: 'Exported 6 rows to export.csv' }]);
    expect(csvLines(artifactText(done.artifacts[0]))).toHaveLength(7);
    expect((await getTask(c, task.id)).artifacts).toEqual(done.artifacts);
  });

  it('a stream dropped on C resumes on B with Last-Event-ID: exactly what it missed, to the end', async () => {
    const task = await startTask(a, slowExport(6));
    const first = await rpcStream(c, 'SubscribeToTask', { id: task.id }, V1);
    const seen = [await first.next(), await first.next(), await first.next()] as SseEvent[];
    first.close();
    const lastId = seen.at(-1)?.id as string;

    const resumed = await rpcStream(b, 'SubscribeToTask', { id: task.id }, { ...V1, lastEventId: lastId });
    const replayed = await resumed.rest();
    expect(ids(replayed)[0]).toBe(Number(lastId) + 1);
    expect(consecutive(ids(replayed))).toBe(true);
    // No task snapshot on a resume: the client has it already.
    expect(replayed.some((e) => result(e).task)).toBe(false);
    expect(result(replayed.at(-1)).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    const log = await replayAll(c, task.id);
    expect(replayed.map((e) => [e.id, result(e)])).toEqual(
      log.filter((e) => Number(e.id) > Number(lastId)).map((e) => [e.id, result(e)]),
    );
  });

  it('CancelTask on B of a job running on A aborts the job there (A writes the cancel)', async () => {
    const task = await startTask(a, skillMessage('sleep', { seconds: 600 }));
    await b.waitForState(task.id, 'TASK_STATE_WORKING');
    const { body } = await b.rpc('CancelTask', { id: task.id }, V1);
    expect(body.result.status.state).toBe('TASK_STATE_CANCELED');
    // Written by A's runner once its job stopped, not by B giving up on it after CANCEL_GRACE_MS.
    expect(body.result.status.message.parts).toEqual([{ text: 'Canceled by request' }]);
    const onC = await getTask(c, task.id);
    expect(onC.status).toEqual(body.result.status);
  });

  it('a blocking SendMessage on B for a job run on A answers with the finished task', async () => {
    const { task } = await send(b, skillMessage('export', { rows: 4, chunkRows: 1, delayMs: 200 }));
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.status.message.parts).toEqual([{ text: 'Exported 4 rows to export.csv' }]);
    const lines = csvLines(artifactText(task.artifacts[0]));
    expect(lines).toEqual([CSV_HEADER, ...lines.slice(1)]);
    expect(lines).toHaveLength(5);
  });

  it('push: each completed task notifies its webhook exactly once with three dispatchers; any JWKS verifies it', async () => {
    const hook = await receiver();
    const senders = [a, b, c];
    const tasks = await Promise.all(
      senders.map(async (agent, i) => {
        const message = skillMessage('export', { rows: 2 });
        const configuration = {
          taskPushNotificationConfig: { url: hook.url(`/hook/${i}`) },
          returnImmediately: true,
        };
        const { task } = await send(agent, message, configuration);
        return agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
      }),
    );
    await hook.waitFor((all) => all.filter((r) => r.status === 200).length >= tasks.length);
    // One more task, notified after the others: a duplicate still due would have gone out by then.
    const witness = await receiver();
    await send(c, skillMessage('export', { rows: 1 }), {
      taskPushNotificationConfig: { url: witness.url() },
    });
    await witness.waitFor((all) => all.some((r) => r.status === 200));

    expect(hook.received).toHaveLength(tasks.length);
    const byTask = new Map(hook.received.map((r) => [tokenClaims(r).taskId, r]));
    expect([...byTask.keys()].sort()).toEqual(tasks.map((t) => t.id).sort());
    const urls = cluster.agents.map((x) => x.url);
    for (const [i, t] of tasks.entries()) {
      const r = byTask.get(t.id) as Received;
      expect(r.path).toBe(`/hook/${i}`);
      expect(JSON.parse(r.body).statusUpdate).toMatchObject({
        taskId: t.id,
        status: { state: 'TASK_STATE_COMPLETED' },
      });
      // Signed by one instance, verified with another's published keys (one shared KEYS_DIR).
      const signer = String(tokenClaims(r).iss);
      expect(urls).toContain(signer);
      const other = urls.find((u) => u !== signer) as string;
      const claims = await hook.verify(other, r, { issuer: signer });
      expect(claims).toMatchObject({ taskId: t.id, notificationId: r.headers['x-a2a-notification-id'] });
    }
  });

  it("the agent card of each instance verifies against any instance's card JWKS (one shared KEYS_DIR/card)", async () => {
    const payloadOf = (card: Record<string, unknown>) => {
      const { signatures: _, ...unsigned } = card;
      return base64url.encode(canonicalize(unsigned) ?? '');
    };
    const deadline = Date.now() + 30_000;
    for (;;) {
      // B and C started at once may each have made a first key; each instance's next reload (10 s)
      // publishes both, and signs with both.
      const sets = await Promise.all(
        [a, b, c].map(
          async (x) =>
            (await (await fetch(`${x.url}/.well-known/agent-card-jwks.json`)).json()) as JSONWebKeySet,
        ),
      );
      const kids = sets.map((set) =>
        set.keys
          .map((k) => k.kid)
          .sort()
          .join(' '),
      );
      if (kids.every((k) => k === kids[0])) break;
      if (Date.now() > deadline)
        throw new Error(`the instances publish different card keys: ${kids.join(' | ')}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const signer of [a, b, c]) {
      const card = (await (
        await fetch(`${signer.url}/.well-known/agent-card.json`, { headers: V1 })
      ).json()) as Record<string, unknown> & {
        signatures: { protected: string; signature: string }[];
      };
      for (const other of [a, b, c]) {
        const keys = (await (
          await fetch(`${other.url}/.well-known/agent-card-jwks.json`)
        ).json()) as JSONWebKeySet;
        for (const signature of card.signatures)
          await flattenedVerify({ payload: payloadOf(card), ...signature }, createLocalJWKSet(keys));
      }
    }
  });

  it('the same Idempotency-Key POSTed to /v1/jobs on A, B and C at once makes one task', async () => {
    const post = (agent: Agent, key: string) =>
      fetch(`${agent.url}/v1/jobs`, {
        method: 'POST',
        headers: { ...agent.credentials, 'Content-Type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({ skill: 'sleep', input: { seconds: 0 } }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { taskId?: string } }));
    const before = await taskCount(a);
    const rounds = 5;
    for (let round = 0; round < rounds; round++) {
      const key = crypto.randomUUID();
      const replies = await Promise.all([a, b, c].map((agent) => post(agent, key)));
      // Each instance answers its own request: the later creates wait for the first and replay it.
      expect(replies.map((r) => r.status)).toEqual([202, 202, 202]);
      const created = new Set(replies.map((r) => r.body.taskId));
      expect(created.size).toBe(1);
      const retry = await post(b, key);
      expect(retry.status).toBe(202);
      expect(created.has(retry.body.taskId)).toBe(true);
    }
    expect(await taskCount(c)).toBe(before + rounds);
  });

  it('the same messageId sent to A, B and C at once makes one task', async () => {
    for (let round = 0; round < 5; round++) {
      const contextId = crypto.randomUUID();
      const message = skillMessage('sleep', { seconds: 0.2 }, { contextId });
      const tasks = await Promise.all([a, b, c].map((agent) => startTask(agent, message)));
      expect(new Set(tasks.map((t) => t.id)).size).toBe(1);
      expect(await taskCount(b, contextId)).toBe(1);
    }
  });
});

/** An allow-listed command that prints its server's pid, then runs until that server is gone. */
function holdCommandFile(): string {
  const script = [
    'const parent = process.ppid;',
    'console.log("server pid " + parent);',
    'setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 200);',
  ].join(' ');
  const file = join(mkdtempSync(join(tmpdir(), 'taskhandle-commands-')), 'commands.json');
  writeFileSync(file, JSON.stringify([{ name: 'hold', argv: [process.execPath, '-e', script] }]));
  return file;
}

describe.skipIf(noPostgres !== undefined)('kill -9 of the instance running the jobs', () => {
  let cluster: Cluster;
  let survivor: Agent;
  let exportId: string;
  let commandId: string;

  beforeAll(async () => {
    cluster = await startCluster(1, { env: { ...QUICK_STOP, COMMANDS_FILE: holdCommandFile() } });
    const runner = cluster.agents[0] as Agent;
    // Started while the runner is alone: its jobs are its own.
    const exported = await startTask(
      runner,
      skillMessage('export', { rows: 30, chunkRows: 1, delayMs: 150 }),
    );
    const command = await startTask(runner, skillMessage('command', { command: 'hold' }));
    exportId = exported.id;
    commandId = command.id;
    const output = await eventually(async () => {
      const parts: { text?: string }[] = (await getTask(runner, commandId)).artifacts?.[0]?.parts ?? [];
      const text = parts.map((p) => p.text ?? '').join('');
      return /server pid \d+/.test(text) ? text : undefined;
    });
    expect(output).toContain(`server pid ${runner.proc.pid}`);
    survivor = await cluster.add();
    const partial = await getTask(survivor, exportId);
    expect(partial.status.state).toBe('TASK_STATE_WORKING');
    expect(partial.artifacts?.[0]?.parts.length ?? 0).toBeGreaterThan(0);
    await runner.kill9();
  }, 30_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('another instance takes the export over once its lease runs out and re-runs it: every row once', async () => {
    const done = await survivor.waitForState(exportId, 'TASK_STATE_COMPLETED', 20_000);
    expect(texts(done)).toContain(RERUN);
    expect(done.status.message.parts).toEqual([{ text: 'Exported 30 rows to export.csv' }]);
    const lines = csvLines(artifactText(done.artifacts[0]));
    expect(lines[0]).toBe(CSV_HEADER);
    expect(lines.slice(1).map((l) => Number(l.split(',')[0]))).toEqual(
      Array.from({ length: 30 }, (_, i) => i + 1),
    );
    expect(
      survivor.logs.some(
        (l) => l.taskId === exportId && l.msg === 'task interrupted by a restart; running it again',
      ),
    ).toBe(true);
  });

  it('a command (its skill fails on interrupt) is failed by another instance, saying why', async () => {
    const failed = await survivor.waitForState(commandId, 'TASK_STATE_FAILED', 20_000);
    expect(failed.status.message.parts).toEqual([{ text: NOT_RERUN }]);
    expect(
      survivor.logs.some((l) => l.taskId === commandId && /its skill asks to fail it/.test(String(l.msg))),
    ).toBe(true);
  });
});

describe.skipIf(noPostgres !== undefined)('kill -9 of the instance delivering a notification', () => {
  const HANGING = { status: 200, delayMs: 60_000 };
  let cluster: Cluster | undefined;
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await cluster?.close();
  });

  it('another instance delivers it once the dead one’s lease ran out: the same notification, once', async () => {
    // An attempt stays leased PUSH_TIMEOUT_MS + 5 s: the takeover comes about 7 s after the claim.
    cluster = await startCluster(1, { env: { ...PUSH, ...QUICK_STOP, PUSH_TIMEOUT_MS: '2000' } });
    const first = cluster.agents[0] as Agent;
    // Every attempt the first instance makes hangs (it is killed during one); the others' succeed.
    const hook = await startReceiver((r) => (tokenClaims(r).iss === first.url ? HANGING : { status: 200 }));
    receivers.push(hook);
    const { task } = await send(first, skillMessage('export', { rows: 1 }), {
      taskPushNotificationConfig: { url: hook.url('/hook') },
    });
    await hook.waitFor((all) => all.length >= 1);
    // Killed during its first attempt, before starting the survivor: on a loaded machine a start
    // can outlast PUSH_TIMEOUT_MS, and the first instance would make (and hang on) a second attempt.
    await first.kill9();
    const second = await cluster.add();
    await hook.waitFor((all) => all.some((r) => r.status === 200), 20_000);
    // A later notification from the survivor: a repeat still due would have gone out before it.
    const witness = await startReceiver();
    receivers.push(witness);
    await send(second, skillMessage('export', { rows: 1 }), {
      taskPushNotificationConfig: { url: witness.url() },
    });
    await witness.waitFor((all) => all.some((r) => r.status === 200));

    const byFirst = hook.received.filter((r) => tokenClaims(r).iss === first.url);
    const bySecond = hook.received.filter((r) => tokenClaims(r).iss === second.url);
    expect(byFirst).toHaveLength(1);
    expect(bySecond.map((r) => r.status)).toEqual([200]);
    const ids = new Set(hook.received.map((r) => r.headers['x-a2a-notification-id']));
    expect(ids.size).toBe(1);
    expect(tokenClaims(bySecond[0] as Received).taskId).toBe(task.id);
    expect(JSON.parse((bySecond[0] as Received).body).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    await hook.verify(second.url, bySecond[0] as Received);
  });
});
