import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { type AgentCard, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutor,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  type ExecutionEventBus,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  type RequestContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import Database from 'better-sqlite3';
import express from 'express';
import { Kysely, SqliteDialect } from 'kysely';

/**
 * The @a2a-js/sdk reference server: DefaultRequestHandler + jsonRpcHandler on express 5, with an
 * executor that publishes a working Task and never finishes on its own (only a cancel ends it),
 * so tasks accumulate as long jobs would. `--store memory` or `--store sqlite --db <file>`
 * (the table must exist: see servers/launch.ts, which creates it with the SDK's a2a-db CLI).
 * `--push`: the card announces push notifications, and the SDK's own InMemoryPushNotificationStore
 * and DefaultPushNotificationSender (its defaults: a POST per event, 5 s timeout, no retry) deliver them.
 */
const { values } = parseArgs({
  options: {
    store: { type: 'string', default: 'memory' },
    db: { type: 'string' },
    push: { type: 'boolean', default: false },
  },
});

/**
 * Keeps every job open until it is canceled, like a long-running agent; except a message with a
 * data part `{"skill":"export",...}` (the push scenario's instant job): that task completes at once.
 */
class LongJobExecutor implements AgentExecutor {
  readonly #open = new Map<string, { contextId: string; finish: () => void }>();

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    bus.publish(
      AgentEvent.task({
        id: ctx.taskId,
        contextId: ctx.contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: now() },
        artifacts: [],
        history: [ctx.userMessage],
        metadata: {},
      }),
    );
    if (isInstantJob(ctx)) {
      bus.publish(
        AgentEvent.statusUpdate({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() },
          metadata: {},
        }),
      );
      return;
    }
    await new Promise<void>((finish) => this.#open.set(ctx.taskId, { contextId: ctx.contextId, finish }));
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    const job = this.#open.get(taskId);
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: job?.contextId ?? '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() },
        metadata: {},
      }),
    );
    this.#open.delete(taskId);
    job?.finish();
  };
}

const now = () => new Date().toISOString();

const isInstantJob = (ctx: RequestContext): boolean =>
  ctx.userMessage.parts.some((p) => p.content?.$case === 'data' && p.content.value?.skill === 'export');

function taskStore(): TaskStore {
  if (values.store === 'memory') return new InMemoryTaskStore();
  if (values.store !== 'sqlite' || !values.db)
    throw new Error('usage: --store memory | --store sqlite --db <file>');
  const sqlite = new Database(values.db);
  // The same durability settings as taskhandle's store: WAL, fsync at every commit.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  return new DatabaseTaskStore(new Kysely({ dialect: new SqliteDialect({ database: sqlite }) }));
}

const app = express();
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card: AgentCard = {
    name: 'sdk-reference',
    description: 'The @a2a-js/sdk reference server under benchmark',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: {
      streaming: true,
      pushNotifications: values.push === true,
      extensions: [],
      extendedAgentCard: false,
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
  const pushStore = values.push ? new InMemoryPushNotificationStore() : undefined;
  const handler = new DefaultRequestHandler(
    card,
    taskStore(),
    new LongJobExecutor(),
    undefined,
    pushStore,
    pushStore && new DefaultPushNotificationSender(pushStore),
  );
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  console.log(
    JSON.stringify({ msg: 'sdk-reference listening', url, store: values.store, push: values.push }),
  );
});
server.keepAliveTimeout = 65_000;
process.once('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
