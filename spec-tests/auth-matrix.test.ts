import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, getTask, rpcStream, send, skillMessage, startTask, V1 } from './a2a.js';
import {
  CONFIG_ID,
  expectSuccess,
  expectTaskNotFound,
  FACES,
  HOOK,
  request,
  TASK_OPS,
  view,
} from './faces.js';
import { type Agent, launch, userMessage } from './harness.js';

/**
 * Two tenants and three principals: alice@acme owns the tasks; bob@globex is in another tenant,
 * carol@acme in alice's own tenant. Whoever is not the owner must learn nothing from a task id: every
 * operation of every face answers exactly what it answers for a task that does not exist, and
 * changes nothing.
 */
const PRINCIPALS = { alice: 'acme', bob: 'globex', carol: 'acme' };
const INTRUDERS = ['bob', 'carol'] as const;

// biome-ignore lint/suspicious/noExplicitAny: tasks are inspected freely in tests
type Json = Record<string, any>;

describe('authorization: a task is its owner’s alone', () => {
  let agent: Agent;
  let alice: Agent;
  let bob: Agent;
  let carol: Agent;
  /** alice's tasks: one working (a long sleep), one completed (an export); each has webhook CONFIG_ID. */
  let running: string;
  let done: string;
  let before: Record<string, { task: Json; configs: Json }>;

  const addConfig = async (owner: Agent, taskId: string) => {
    const { body } = await owner.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId, id: CONFIG_ID, url: HOOK },
      V1,
    );
    expect(body.error).toBeUndefined();
  };
  /** A working task of alice's with webhook CONFIG_ID. */
  const aliceTask = async (): Promise<string> => {
    const { id } = await startTask(alice, skillMessage('sleep', { seconds: 600 }));
    await addConfig(alice, id);
    await alice.waitForState(id, 'TASK_STATE_WORKING');
    return id;
  };
  const snapshot = async (id: string) => ({
    task: await getTask(alice, id),
    configs: (await alice.rpc('ListTaskPushNotificationConfigs', { taskId: id }, V1)).body.result,
  });

  beforeAll(async () => {
    agent = await launch({
      apiKeys: PRINCIPALS,
      as: null,
      env: {
        // The webhooks point at 127.0.0.1:9, where nothing listens: deliveries just fail.
        PUSH_ALLOW: '127.0.0.0/8',
        SHUTDOWN_TIMEOUT_MS: '200',
        RUNNER_CONCURRENCY: '200',
      },
    });
    alice = agent.as('alice');
    bob = agent.as('bob');
    carol = agent.as('carol');
    running = await aliceTask();
    done = (await send(alice, skillMessage('export', { rows: 2 }))).task.id;
    await addConfig(alice, done);
    // Polled once by the owner: the poll cache holds the task before anyone else asks for it.
    before = { [running]: await snapshot(running), [done]: await snapshot(done) };
  });
  afterAll(async () => {
    await agent?.stop();
  });

  for (const face of FACES) {
    describe(`${face}: others get exactly what a task that does not exist gets`, () => {
      it.each(TASK_OPS.filter((o) => o.face === face).map((o) => [o.name, o] as const))(
        '%s',
        async (_, op) => {
          for (const who of INTRUDERS) {
            const caller = agent.as(who);
            for (const [what, id] of [
              ['working', running],
              ['completed', done],
            ] as const) {
              const missing = crypto.randomUUID();
              const theirs = await op.send(caller, id);
              const nobodys = await op.send(caller, missing);
              expectTaskNotFound(theirs, face, `${who} on alice's ${what} task`);
              expect(view(theirs, id), `${who} on alice's ${what} task`).toEqual(view(nobodys, missing));
            }
          }
        },
      );
    });
  }

  it('after all that, nothing of alice’s tasks changed: state, history, artifacts, webhooks', async () => {
    const nowRunning = await snapshot(running);
    const was = before[running];
    expect(nowRunning.task.status.state).toBe('TASK_STATE_WORKING');
    expect(nowRunning.task.history).toEqual(was?.task.history);
    expect(nowRunning.task.artifacts).toEqual(was?.task.artifacts);
    expect(nowRunning.configs).toEqual(was?.configs);
    expect(await snapshot(done)).toEqual(before[done]);
    expect(nowRunning.configs.configs.map((c: { id: string }) => c.id)).toEqual([CONFIG_ID]);
  });

  describe('ListTasks', () => {
    /** The ids a caller lists, over JSON-RPC v1.0 and REST v1.0 (which must agree). */
    const listed = async (who: Agent, query: Record<string, string> = {}): Promise<string[]> => {
      const { body } = await who.rpc('ListTasks', { pageSize: 100, ...query }, V1);
      expect(body.error).toBeUndefined();
      const rest = await request(
        `${agent.url}/rest/tasks?${new URLSearchParams({ pageSize: '100', ...query })}`,
        {
          headers: { 'A2A-Version': '1.0', ...who.credentials },
        },
      );
      expect(rest.status).toBe(200);
      const ids = (body.result.tasks ?? []).map((t: { id: string }) => t.id);
      expect((rest.body.tasks ?? []).map((t: { id: string }) => t.id)).toEqual(ids);
      expect(body.result.totalSize ?? 0).toBe(ids.length);
      return ids;
    };

    it('shows each caller its own tasks only, with any filter', async () => {
      const mine = (await startTask(bob, skillMessage('sleep', { seconds: 600 }))).id;
      await bob.waitForState(mine, 'TASK_STATE_WORKING');

      const ofAlice = await listed(alice);
      expect(ofAlice).toEqual(expect.arrayContaining([running, done]));
      expect(ofAlice).not.toContain(mine);
      expect(await listed(bob)).toEqual([mine]);
      expect(await listed(carol)).toEqual([]);

      const working = { status: 'TASK_STATE_WORKING' };
      expect(await listed(alice, working)).toContain(running);
      expect(await listed(bob, working)).toEqual([mine]);
      expect(await listed(carol, working)).toEqual([]);
      const context = { contextId: before[running]?.task.contextId };
      expect(await listed(alice, context)).toEqual([running]);
      expect(await listed(bob, context)).toEqual([]);
      expect(await listed(carol, context)).toEqual([]);
    });

    it('a messageId or contextId of alice’s, reused by bob, makes a task of bob’s own', async () => {
      const contextId = crypto.randomUUID();
      const message = skillMessage('export', { rows: 1 }, { contextId });
      const hers = (await send(alice, message)).task;
      // The same message (same messageId) from bob is not a retry of alice's: a new task, his.
      const his = (await send(bob, message)).task;
      expect(his.id).not.toBe(hers.id);
      expect(his.status.state).toBe('TASK_STATE_COMPLETED');
      // alice's retry still finds her task, which bob's message did not touch.
      expect((await send(alice, message)).task.id).toBe(hers.id);
      expect((await getTask(alice, hers.id)).history).toHaveLength(1);
      expect(await listed(alice, { contextId })).toEqual([hers.id]);
      expect(await listed(bob, { contextId })).toEqual([his.id]);
      expect(await listed(carol, { contextId })).toEqual([]);
    });
  });

  describe('alice, the owner, can do all of it (the same requests)', () => {
    it.each(TASK_OPS.map((o) => [`${o.face} ${o.name}`, o] as const))('%s', async (_, op) => {
      const id = await aliceTask();
      const reply = await op.send(alice, id, { maxEvents: 1 });
      expectSuccess(reply, op, id);
      await alice.rpc('CancelTask', { id }, V1);
    });
  });

  describe('audit', () => {
    /** The audit lines logged about a task, in order. */
    const auditOf = (taskId: string) =>
      agent.logs.filter((l) => l.audit !== undefined && l.taskId === taskId);

    it('logs create, input, webhook set and delete, and cancel with principal, tenant and task id, on every face', async () => {
      // create: a streaming send (JSON-RPC v1.0)
      const stream = await rpcStream(
        alice,
        'SendStreamingMessage',
        { message: skillMessage('sleep', { seconds: 600 }) },
        V1,
      );
      const id: string = (await stream.next())?.data.result.task.id;
      stream.close();
      await alice.waitForState(id, 'TASK_STATE_WORKING');
      // input: a follow-up (REST v1.0)
      const input = await request(`${agent.url}/rest/message:send`, {
        method: 'POST',
        headers: { 'A2A-Version': '1.0', 'Content-Type': 'application/json', ...alice.credentials },
        body: JSON.stringify({
          message: userMessage('how far?', { taskId: id }),
          configuration: { returnImmediately: true },
        }),
      });
      expect(input.status).toBe(200);
      // push-config-set (REST v0.3)
      const set = await request(`${agent.url}/rest/v1/tasks/${id}/pushNotificationConfigs`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...alice.credentials },
        body: JSON.stringify({ name: `tasks/${id}`, pushNotificationConfig: { id: 'audit', url: HOOK } }),
      });
      expect(set.status).toBe(201);
      // push-config-delete (JSON-RPC v0.3)
      const deleted = await alice.rpc('tasks/pushNotificationConfig/delete', {
        id,
        pushNotificationConfigId: 'audit',
      });
      expect(deleted.body.error).toBeUndefined();
      // cancel (JSON-RPC v1.0)
      expect((await alice.rpc('CancelTask', { id }, V1)).body.result.status.state).toBe(
        'TASK_STATE_CANCELED',
      );

      const lines = await eventually(async () => {
        const found = auditOf(id);
        return found.length >= 5 ? found : undefined;
      }, 5000);
      const who = { principal: 'alice', tenant: 'acme', taskId: id };
      expect(
        lines.map((l) => ({ audit: l.audit, principal: l.principal, tenant: l.tenant, taskId: l.taskId })),
      ).toEqual([
        { audit: 'create', ...who },
        { audit: 'input', ...who },
        { audit: 'push-config-set', ...who },
        { audit: 'push-config-delete', ...who },
        { audit: 'cancel', ...who },
      ]);
    });

    it('a retried create logs no second create', async () => {
      const message = skillMessage('export', { rows: 1 });
      const { task } = await send(alice, message);
      await send(alice, message);
      await new Promise((r) => setTimeout(r, 200));
      expect(auditOf(task.id).map((l) => l.audit)).toEqual(['create']);
    });

    it('others’ refused attempts on alice’s tasks left no audit line; no log line holds a key', async () => {
      for (const id of [running, done]) {
        const others = auditOf(id).filter((l) => l.principal !== 'alice');
        expect(others, id).toEqual([]);
      }
      const everything = JSON.stringify(agent.logs);
      for (const [who, key] of Object.entries(agent.keys)) expect(everything, who).not.toContain(key);
    });
  });
});
