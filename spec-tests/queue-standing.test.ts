import { type ListTasksRequest, TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLE, legacyMessage, skillMessage, skillRequest, startTask } from './a2a.js';
import { asTask, grpcClient } from './grpc.js';
import { type Agent, launch } from './harness.js';
import { dropSchema, freshSchema, postgresUrl, skipWithoutPostgres } from './postgres.js';

// biome-ignore lint/suspicious/noExplicitAny: replies are inspected freely in tests
type Json = Record<string, any>;

/**
 * A queued task's standing (docs/scheduling.md) on the answer to the create and on each ListTasks
 * item, as GetTask shows it, in every face's own place for it. One job holds the server's only
 * runner slot, so every task made after it waits: each face calls as a principal of its own, whose
 * queue holds only what that face made (the 2nd task made has 1 ahead, and so on).
 */

/** What a face shows of a task's standing: where it stands, and the poll interval it asks for. */
interface Standing {
  queue?: { position: number; ahead: number; reason: string };
  pollIntervalMs: number;
}

/** One face: make a queued task, read one, list them, each answer's standing as that face shows it. */
interface FaceUnderTest {
  name: string;
  /** The principal it calls as (its own queue). */
  who: string;
  create(agent: Agent): Promise<{ id: string; standing: Standing; status?: number; headers?: Headers }>;
  get(agent: Agent, id: string): Promise<Standing>;
  /** Every listing this face offers, by name: task id -> standing. */
  lists: Record<string, (agent: Agent) => Promise<Map<string, Standing>>>;
}

const SLEEP = { skill: 'sleep', input: { seconds: 600 } };
const pick = (h: Json | undefined): Standing => ({
  ...(h?.queue ? { queue: h.queue } : {}),
  pollIntervalMs: h?.pollIntervalMs,
});
/** The A2A handle extension's metadata (v1.0 and v0.3, JSON-RPC, REST and gRPC alike). */
const a2aStanding = (task: Json): Standing => pick(task.metadata?.[HANDLE]);
/** MCP: `_meta["taskhandle/queue"]`, the interval as the revision names it. */
const mcpStanding = (task: Json, interval: 'pollInterval' | 'pollIntervalMs'): Standing => ({
  ...(task._meta?.['taskhandle/queue'] ? { queue: task._meta['taskhandle/queue'] } : {}),
  pollIntervalMs: task[interval],
});
const byId = (tasks: Json[], id: (t: Json) => string, standing: (t: Json) => Standing) =>
  new Map(tasks.map((t) => [id(t), standing(t)]));

async function call(agent: Agent, path: string, init: RequestInit = {}): Promise<Json> {
  const res = await fetch(`${agent.url}${path}`, {
    ...init,
    headers: {
      ...agent.credentials,
      ...(init.body ? { 'Content-Type': 'application/json' } : {}),
      ...init.headers,
    },
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text}`);
  return { status: res.status, headers: res.headers, body: JSON.parse(text) };
}
const post = (agent: Agent, path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(agent, path, { method: 'POST', body: JSON.stringify(body), headers });
async function rpc(agent: Agent, method: string, params: unknown, version?: '1.0' | '0.3'): Promise<Json> {
  const { body } = await agent.rpc(method, params, version ? { version } : undefined);
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}
let mcpId = 1;
/** One JSON-RPC request to /mcp: 2025-11-25 (no per-request _meta), or 2026-07-28 with the Tasks extension. */
async function mcp(agent: Agent, method: string, params: Json, stateless: boolean): Promise<Json> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  const { body } = await post(
    agent,
    '/mcp',
    { jsonrpc: '2.0', id: mcpId++, method, params: stateless ? { ...params, _meta: meta } : params },
    {
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': stateless ? '2026-07-28' : '2025-11-25',
      ...(stateless ? { 'Mcp-Method': method } : {}),
      ...(stateless && typeof (params.taskId ?? params.name) === 'string'
        ? { 'Mcp-Name': params.taskId ?? params.name }
        : {}),
    },
  );
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

let grpc: Client;
const grpcList = (o: Partial<ListTasksRequest>): ListTasksRequest => ({
  tenant: '',
  contextId: '',
  status: TaskState.TASK_STATE_UNSPECIFIED,
  pageSize: 100,
  pageToken: '',
  historyLength: undefined,
  statusTimestampAfter: undefined,
  includeArtifacts: false,
  ...o,
});

const FACES: FaceUnderTest[] = [
  {
    name: 'A2A JSON-RPC v1.0',
    who: 'rpc',
    create: async (a) => {
      const { task } = await rpc(
        a,
        'SendMessage',
        {
          message: skillMessage(SLEEP.skill, SLEEP.input),
          configuration: { returnImmediately: true },
        },
        '1.0',
      );
      return { id: task.id, standing: a2aStanding(task) };
    },
    get: async (a, id) => a2aStanding(await rpc(a, 'GetTask', { id }, '1.0')),
    lists: {
      // With histories the list reads each task's log; without, the records alone: both count alike.
      ListTasks: async (a) =>
        byId((await rpc(a, 'ListTasks', { pageSize: 100 }, '1.0')).tasks, (t) => t.id, a2aStanding),
      'ListTasks historyLength 0': async (a) =>
        byId(
          (await rpc(a, 'ListTasks', { pageSize: 100, historyLength: 0 }, '1.0')).tasks,
          (t) => t.id,
          a2aStanding,
        ),
    },
  },
  {
    name: 'A2A REST v1.0',
    who: 'rest',
    create: async (a) => {
      const { body } = await post(
        a,
        '/rest/message:send',
        { message: skillMessage(SLEEP.skill, SLEEP.input), configuration: { returnImmediately: true } },
        { 'A2A-Version': '1.0' },
      );
      return { id: body.task.id, standing: a2aStanding(body.task) };
    },
    get: async (a, id) =>
      a2aStanding((await call(a, `/rest/tasks/${id}`, { headers: { 'A2A-Version': '1.0' } })).body),
    lists: {
      'GET /rest/tasks': async (a) =>
        byId(
          (await call(a, '/rest/tasks?pageSize=100', { headers: { 'A2A-Version': '1.0' } })).body.tasks,
          (t) => t.id,
          a2aStanding,
        ),
    },
  },
  {
    name: 'A2A gRPC',
    who: 'grpc',
    create: async () => {
      const task = asTask(
        await grpc.sendMessage(skillRequest(SLEEP.skill, SLEEP.input, { returnImmediately: true })),
      );
      return { id: task.id, standing: a2aStanding(task as unknown as Json) };
    },
    get: async (_a, id) =>
      a2aStanding((await grpc.getTask({ tenant: '', id, historyLength: undefined })) as unknown as Json),
    lists: {
      ListTasks: async () =>
        byId((await grpc.listTasks(grpcList({}))).tasks as unknown as Json[], (t) => t.id, a2aStanding),
    },
  },
  {
    name: 'A2A v0.3 (JSON-RPC message/send, REST GET /rest/v1/tasks)',
    who: 'legacy',
    create: async (a) => {
      const task = await rpc(a, 'message/send', {
        message: legacyMessage([{ kind: 'data', data: SLEEP }]),
      });
      return { id: task.id, standing: a2aStanding(task) };
    },
    get: async (a, id) => a2aStanding(await rpc(a, 'tasks/get', { id })),
    lists: {
      'GET /rest/v1/tasks': async (a) =>
        byId((await call(a, '/rest/v1/tasks?pageSize=100')).body, (t) => t.id, a2aStanding),
    },
  },
  {
    name: '/v1/jobs',
    who: 'jobs',
    create: async (a) => {
      const { status, headers, body } = await post(a, '/v1/jobs', SLEEP);
      return { id: body.taskId, standing: pick(body), status, headers };
    },
    get: async (a, id) => pick((await call(a, `/v1/jobs/${id}`)).body),
    lists: {
      'GET /v1/jobs': async (a) =>
        byId((await call(a, '/v1/jobs?pageSize=100')).body.jobs, (j) => j.taskId, pick),
    },
  },
  {
    name: 'MCP 2025-11-25 (task-augmented tools/call, tasks/get, tasks/list)',
    who: 'mcp',
    create: async (a) => {
      const { task } = await mcp(
        a,
        'tools/call',
        { name: SLEEP.skill, arguments: SLEEP.input, task: {} },
        false,
      );
      return { id: task.taskId, standing: mcpStanding(task, 'pollInterval') };
    },
    get: async (a, id) => mcpStanding(await mcp(a, 'tasks/get', { taskId: id }, false), 'pollInterval'),
    lists: {
      'tasks/list': async (a) =>
        byId(
          (await mcp(a, 'tasks/list', {}, false)).tasks,
          (t) => t.taskId,
          (t) => mcpStanding(t, 'pollInterval'),
        ),
    },
  },
  {
    name: 'MCP 2026-07-28 Tasks extension (tools/call, tasks/get)',
    who: 'mcpx',
    create: async (a) => {
      const result = await mcp(a, 'tools/call', { name: SLEEP.skill, arguments: SLEEP.input }, true);
      expect(result.resultType).toBe('task');
      return { id: result.taskId, standing: mcpStanding(result, 'pollIntervalMs') };
    },
    get: async (a, id) => mcpStanding(await mcp(a, 'tasks/get', { taskId: id }, true), 'pollIntervalMs'),
    // The extension has no tasks/list (keep the ids): 2025-11-25's lists the same tasks.
    lists: {
      'tasks/list (2025-11-25)': async (a) =>
        byId(
          (await mcp(a, 'tasks/list', {}, false)).tasks,
          (t) => t.taskId,
          (t) => mcpStanding(t, 'pollInterval'),
        ),
    },
  },
];

const PRINCIPALS = Object.fromEntries([...FACES.map((f) => [f.who, 'acme']), ['ops', 'ops']]);
const at = (position: number) => ({ position, ahead: position - 1, reason: 'no free slot' });
/** A queue is in creation order to the millisecond (within one, by task id): make them one apart. */
const tick = () => new Promise((r) => setTimeout(r, 2));

const noPostgres = await skipWithoutPostgres();

for (const store of ['SQLite', 'PostgreSQL'] as const) {
  describe.skipIf(store === 'PostgreSQL' && noPostgres !== undefined)(
    `queued tasks' standing on the create's answer and on ListTasks items (${store})`,
    () => {
      let agent: Agent;
      let schema: string | undefined;
      const made = new Map<string, string[]>();
      let blocker: string;

      beforeAll(async () => {
        schema = store === 'PostgreSQL' ? freshSchema() : undefined;
        agent = await launch({
          apiKeys: PRINCIPALS,
          as: null,
          env: {
            RUNNER_CONCURRENCY: '1',
            GRPC_PORT: '0',
            ...(schema ? { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema } : {}),
          },
        });
        grpc = await grpcClient(agent.as('grpc'));
        // The only runner slot, held: every task made after this one waits, queued.
        blocker = (await startTask(agent.as('ops'), skillMessage(SLEEP.skill, SLEEP.input))).id;
        await agent.as('ops').waitForState(blocker, 'TASK_STATE_WORKING');
      });
      afterAll(async () => {
        await agent?.stop();
        if (schema) await dropSchema(schema);
      });

      for (const face of FACES) {
        it(`${face.name}: each create answers with where its task stands, as GetTask and every list item show it`, async () => {
          const a = agent.as(face.who);
          const created = [];
          for (let i = 0; i < 3; i++) {
            created.push(await face.create(a));
            await tick();
          }
          made.set(
            face.who,
            created.map((c) => c.id),
          );
          expect(created.map((c) => c.standing)).toEqual(
            [1, 2, 3].map((n) => ({ queue: at(n), pollIntervalMs: 1000 })),
          );
          for (const c of created) expect(await face.get(a, c.id), `GetTask ${c.id}`).toEqual(c.standing);
          for (const [name, list] of Object.entries(face.lists)) {
            const listed = await list(a);
            for (const c of created) expect(listed.get(c.id), `${name} ${c.id}`).toEqual(c.standing);
          }
        });
      }

      it('/v1/jobs: the poll interval a create asks for grows with the tasks ahead, as on GET (Retry-After too)', async () => {
        const a = agent.as('jobs');
        const ids = made.get('jobs') ?? [];
        let last: Awaited<ReturnType<FaceUnderTest['create']>> | undefined;
        while (ids.length < 6) {
          last = await (FACES.find((f) => f.who === 'jobs') as FaceUnderTest).create(a);
          ids.push(last.id);
          await tick();
        }
        made.set('jobs', ids);
        // 5 ahead: 250 ms each, past the skill's own 1000.
        expect(last?.status).toBe(202);
        expect(last?.standing).toEqual({ queue: at(6), pollIntervalMs: 1250 });
        expect(last?.headers?.get('Retry-After')).toBe('2');
        const polled = await call(a, `/v1/jobs/${last?.id}`);
        expect(pick(polled.body)).toEqual(last?.standing);
        expect(polled.headers.get('Retry-After')).toBe('2');
      });

      it('a task that runs carries no queue: not on its list item, nor on a read', async () => {
        const ops = agent.as('ops');
        const [task] = (await rpc(ops, 'ListTasks', { pageSize: 100 }, '1.0')).tasks;
        expect(task.id).toBe(blocker);
        expect(task.status.state).toBe('TASK_STATE_WORKING');
        expect(task.metadata[HANDLE]).not.toHaveProperty('queue');
        const [job] = (await call(ops, '/v1/jobs')).body.jobs;
        expect(job).toMatchObject({ taskId: blocker, status: 'working' });
        expect(job).not.toHaveProperty('queue');
        const [mcpTask] = (await mcp(ops, 'tasks/list', {}, false)).tasks;
        expect(mcpTask.taskId).toBe(blocker);
        expect(mcpTask._meta ?? {}).not.toHaveProperty('taskhandle/queue');
      });

      it('a task a blocking send saw to its end carries no queue', async () => {
        // Free the slot: every queued task canceled first, so that the next one runs at once.
        for (const face of FACES) {
          for (const id of made.get(face.who) ?? [])
            await call(agent.as(face.who), `/v1/jobs/${id}:cancel`, { method: 'POST' });
        }
        await call(agent.as('ops'), `/v1/jobs/${blocker}:cancel`, { method: 'POST' });
        await agent.as('ops').waitForState(blocker, 'TASK_STATE_CANCELED');
        const ops = agent.as('ops');
        const sent = await rpc(ops, 'SendMessage', { message: skillMessage('sleep', { seconds: 0 }) }, '1.0');
        expect(sent.task.status.state).toBe('TASK_STATE_COMPLETED');
        expect(sent.task.metadata[HANDLE]).not.toHaveProperty('queue');
        const waited = await post(
          ops,
          '/v1/jobs',
          { skill: 'sleep', input: { seconds: 0 } },
          { Prefer: 'wait=30' },
        );
        expect(waited.status).toBe(200);
        expect(waited.body).toMatchObject({ status: 'completed' });
        expect(waited.body).not.toHaveProperty('queue');
      });
    },
  );
}
