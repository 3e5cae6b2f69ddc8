import { type AgentCard, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, csvLines, HANDLE, skillRequest } from './a2a.js';
import { type Agent, launch } from './harness.js';

const asTask = (result: unknown): Task => {
  expect(result).toHaveProperty('status');
  return result as Task;
};

const rejection = async (p: Promise<unknown>): Promise<Error> => {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the call to fail');
};

/** The flows every transport must carry the same way. */
function clientFlows(name: string, makeClient: () => Promise<Client>) {
  describe(name, () => {
    let client: Client;
    beforeAll(async () => {
      client = await makeClient();
    });

    it('sendMessage (blocking) returns the completed export with its artifact', async () => {
      const task = asTask(await client.sendMessage(skillRequest('export', { rows: 5, chunkRows: 2 })));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const artifact = task.artifacts[0];
      expect(artifact?.name).toBe('export.csv');
      const text = (artifact?.parts ?? [])
        .map((p) => (p.content?.$case === 'raw' ? p.content.value.toString('utf8') : ''))
        .join('');
      expect(csvLines(text)).toHaveLength(6);
      expect(task.metadata?.[HANDLE]?.pollIntervalMs).toBe(2000);
    });

    it('sendMessage (returnImmediately), getTask, cancelTask', async () => {
      const started = asTask(
        await client.sendMessage(skillRequest('sleep', { seconds: 30 }, { returnImmediately: true })),
      );
      expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(started.status?.state);
      const got = await client.getTask({ tenant: '', id: started.id, historyLength: 1 });
      expect(got.id).toBe(started.id);
      expect(got.history).toHaveLength(1);
      const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const again = await rejection(client.cancelTask({ tenant: '', id: started.id, metadata: undefined }));
      expect(again.name).toBe('TaskNotCancelableError');
      const missing = await rejection(
        client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }),
      );
      expect(missing.name).toBe('TaskNotFoundError');
    });

    it('sendMessageStream yields the task, then updates, ending completed', async () => {
      const events: StreamResponse[] = [];
      for await (const e of client.sendMessageStream(skillRequest('export', { rows: 3, chunkRows: 1 })))
        events.push(e);
      expect(events[0]?.payload?.$case).toBe('task');
      const last = events.at(-1)?.payload;
      expect(last?.$case).toBe('statusUpdate');
      if (last?.$case === 'statusUpdate')
        expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const taskId = events[0]?.payload?.$case === 'task' ? events[0].payload.value.id : '';
      const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
      expect(csvLines(artifactText({ parts: task.artifacts[0]?.parts.map(rawPart) }))).toHaveLength(4);
    });

    it('resubscribeTask follows a running task to its end', async () => {
      const started = asTask(
        await client.sendMessage(
          skillRequest('export', { rows: 3, chunkRows: 1, delayMs: 150 }, { returnImmediately: true }),
        ),
      );
      const events: StreamResponse[] = [];
      for await (const e of client.resubscribeTask({ tenant: '', id: started.id })) events.push(e);
      expect(events[0]?.payload?.$case).toBe('task');
      const last = events.at(-1)?.payload;
      if (last?.$case !== 'statusUpdate') throw new Error(`last event is ${last?.$case}`);
      expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });

    it('listTasks pages through the tasks of a context', async () => {
      const contextId = crypto.randomUUID();
      for (let i = 0; i < 3; i++) {
        const r = skillRequest('export', { rows: 1 });
        if (r.message) r.message.contextId = contextId;
        await client.sendMessage(r);
      }
      const page = await client.listTasks({
        tenant: '',
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 2,
        pageToken: '',
        historyLength: undefined,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      });
      expect(page.tasks).toHaveLength(2);
      expect(page.totalSize).toBe(3);
      expect(page.nextPageToken).not.toBe('');
    });
  });
}

const rawPart = (p: { content?: { $case: string; value: unknown } }) => ({
  raw: p.content?.$case === 'raw' ? (p.content.value as Buffer).toString('base64') : '',
});

describe("the SDK's ClientFactory against the real server", () => {
  let agent: Agent;
  let card: AgentCard;
  beforeAll(async () => {
    // As a principal: listTasks needs an identity. The card stays public: the resolver reads it as is.
    agent = await launch({ apiKeys: { alice: 'acme' } });
    card = await new DefaultAgentCardResolver().resolve(agent.url);
  });
  afterAll(async () => {
    await agent?.stop();
  });

  /** fetch with alice's API key on every request, through the SDK's own authentication hook. */
  const authenticated = (): typeof fetch =>
    createAuthenticatingFetchWithRetry(fetch, {
      headers: async () => agent.credentials,
      shouldRetryWithHeaders: async () => undefined,
    });
  /** The SDK's default factory, its transports sending alice's key. */
  const factory = (o: Partial<ClientFactoryOptions> = {}) =>
    new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [
          new JsonRpcTransportFactory({ fetchImpl: authenticated() }),
          new RestTransportFactory({ fetchImpl: authenticated() }),
        ],
        ...o,
      }),
    );

  it('createFromUrl reads the card and picks JSON-RPC v1.0', async () => {
    const client = await new ClientFactory().createFromUrl(agent.url);
    expect(client.transport.protocolName).toBe('JSONRPC');
    expect(client.protocolVersion).toBe('1.0');
  });

  it('a client without credentials is refused', async () => {
    const client = await new ClientFactory().createFromUrl(agent.url);
    const refused = await rejection(client.getTask({ tenant: '', id: 'any', historyLength: undefined }));
    expect(refused.message).toMatch(/401|-32050|Unauthenticated/);
  });

  clientFlows('JSON-RPC v1.0 (createFromUrl)', () => factory().createFromUrl(agent.url));
  clientFlows('HTTP+JSON v1.0 (preferred transport)', async () => {
    const client = await factory({ preferredTransports: ['HTTP+JSON'] }).createFromUrl(agent.url);
    expect(client.transport.protocolName).toBe('HTTP+JSON');
    return client;
  });

  /** A v0.3 peer: the SDK's compat transports, offered only the card's 0.3 interfaces. */
  const legacyClient = (binding: string) => async () => {
    const only03 = {
      ...card,
      supportedInterfaces: card.supportedInterfaces.filter(
        (i) => i.protocolVersion === '0.3' && i.protocolBinding === binding,
      ),
    };
    expect(only03.supportedInterfaces).toHaveLength(1);
    const legacyFactory = new ClientFactory({
      transports: [
        new JsonRpcTransportFactory({ legacyCompat: { enabled: true }, fetchImpl: authenticated() }),
        new RestTransportFactory({ legacyCompat: { enabled: true }, fetchImpl: authenticated() }),
      ],
    });
    const client = await legacyFactory.createFromAgentCard(only03);
    expect(client.protocolVersion).toBe('0.3');
    return client;
  };

  describe('v0.3 compat clients', () => {
    for (const binding of ['JSONRPC', 'HTTP+JSON']) {
      describe(binding, () => {
        let client: Client;
        beforeAll(async () => {
          client = await legacyClient(binding)();
        });

        it('sendMessage (blocking), getTask, cancelTask', async () => {
          const done = asTask(
            await client.sendMessage(skillRequest('export', { rows: 2 }, { returnImmediately: false })),
          );
          expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
          expect(done.artifacts).toHaveLength(1);
          const started = asTask(
            await client.sendMessage(skillRequest('sleep', { seconds: 30 }, { returnImmediately: true })),
          );
          expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(
            started.status?.state,
          );
          const got = await client.getTask({ tenant: '', id: started.id, historyLength: undefined });
          expect(got.id).toBe(started.id);
          const canceled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
          expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
        });

        it('sendMessageStream ends completed', async () => {
          const events: StreamResponse[] = [];
          for await (const e of client.sendMessageStream(skillRequest('export', { rows: 2, chunkRows: 1 })))
            events.push(e);
          expect(events[0]?.payload?.$case).toBe('task');
          const last = events.at(-1)?.payload;
          if (last?.$case !== 'statusUpdate') throw new Error(`last event is ${last?.$case}`);
          expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        });
      });
    }
  });
});

describe("the SDK's clients and a blocking send past BLOCKING_TIMEOUT_MS (kept alive with spaces)", () => {
  let agent: Agent;
  let card: AgentCard;
  beforeAll(async () => {
    agent = await launch({ env: { BLOCKING_TIMEOUT_MS: '800', SSE_KEEPALIVE_MS: '200' } });
    card = await new DefaultAgentCardResolver().resolve(agent.url);
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const clients: [string, () => Promise<Client>][] = [
    ['JSON-RPC v1.0', () => new ClientFactory().createFromUrl(agent.url)],
    [
      'HTTP+JSON v1.0',
      () =>
        new ClientFactory(
          ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
            preferredTransports: ['HTTP+JSON'],
          }),
        ).createFromUrl(agent.url),
    ],
    ...['JSONRPC', 'HTTP+JSON'].map((binding): [string, () => Promise<Client>] => [
      `${binding} v0.3`,
      () =>
        new ClientFactory({
          transports: [
            new JsonRpcTransportFactory({ legacyCompat: { enabled: true } }),
            new RestTransportFactory({ legacyCompat: { enabled: true } }),
          ],
        }).createFromAgentCard({
          ...card,
          supportedInterfaces: card.supportedInterfaces.filter(
            (i) => i.protocolVersion === '0.3' && i.protocolBinding === binding,
          ),
        }),
    ]),
  ];
  for (const [name, make] of clients) {
    it(`${name}: sendMessage returns the working task, its status text saying how to follow it`, async () => {
      const client = await make();
      const task = asTask(await client.sendMessage(skillRequest('sleep', { seconds: 30 })));
      expect(task.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      const text = (task.status?.message?.parts ?? [])
        .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
        .join('');
      expect(text).toMatch(/^Still working after \d+(\.\d)? s; /);
      expect(text).toContain(`${task.id} every ${task.metadata?.[HANDLE]?.pollIntervalMs} ms`);
      await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    });
  }
});
