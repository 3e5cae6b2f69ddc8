import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TaskEvent } from '../../../src/engine/events.js';
import type { GuardedWrite, ListFilter, NewTask, TaskStore } from '../../../src/engine/store-port.js';
import type { Message, TaskRecord } from '../../../src/engine/task.js';

/** A fixed epoch: the port takes every time as an argument, so the contract never reads a clock. */
export const T0 = 1_700_000_000_000;
export const HOUR = 3_600_000;

export const userMessage = (messageId: string, text = 'hello'): Message => ({
  messageId,
  role: 'ROLE_USER',
  parts: [{ text }],
});

export const agentMessage = (text: string): Message => ({
  messageId: randomUUID(),
  role: 'ROLE_AGENT',
  parts: [{ text }],
});

export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  const messageId = overrides.messageId ?? randomUUID();
  return {
    id: randomUUID(),
    contextId: 'ctx-1',
    owner: 'alice',
    skill: 'echo',
    input: { text: 'hi', n: 1 },
    metadata: { origin: 'contract' },
    createdAt: T0,
    expiresAt: T0 + HOUR,
    ttlMs: HOUR,
    pollIntervalMs: 1000,
    messageId,
    events: [
      { kind: 'message', message: userMessage(messageId) },
      { kind: 'status', state: 'submitted' },
    ],
    ...overrides,
  };
}

export const note = (text: string): TaskEvent => ({ kind: 'message', message: agentMessage(text) });
/** What each part of the contract gets: the store under test (fresh per test) and helpers over it. */
export interface Contract {
  readonly store: TaskStore;
  /** Creates a task and returns its record (asserting it was created). */
  create(overrides?: Partial<NewTask>): Promise<TaskRecord>;
  /** The seq numbers of a task's whole log. */
  seqs(taskId: string): Promise<number[]>;
  /** A guarded write from `submitted` at T0 + 10 with no events, as overridden. */
  write(taskId: string, w: Partial<GuardedWrite>): ReturnType<TaskStore['write']>;
  /** Follows pageToken to the end; fails if it never ends. */
  listAll(filter: Omit<ListFilter, 'pageToken'>): Promise<TaskRecord[]>;
}

export function contract(current: () => TaskStore): Contract {
  const c: Contract = {
    get store() {
      return current();
    },
    async create(overrides = {}) {
      const { result, created } = await c.store.createTask(newTask(overrides));
      expect(created).toBe(true);
      return result.record;
    },
    seqs: async (taskId) => (await c.store.readEvents(taskId, 0, 1000)).map((e) => e.seq),
    write: (taskId, w) => c.store.write({ taskId, from: ['submitted'], events: [], at: T0 + 10, ...w }),
    async listAll(filter) {
      const all: TaskRecord[] = [];
      let pageToken: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await c.store.listTasks({ ...filter, pageToken });
        expect(page.records.length).toBeLessThanOrEqual(filter.pageSize);
        all.push(...page.records);
        if (page.nextPageToken === '') return all;
        pageToken = page.nextPageToken;
      }
      throw new Error('listTasks never returned an empty nextPageToken');
    },
  };
  return c;
}
