import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isEngineError } from '../src/engine/errors.js';
import type { TaskEvent } from '../src/engine/events.js';
import type { Message, TaskRecord } from '../src/engine/task.js';
import type { GuardedWrite, ListFilter, NewTask, TaskStore } from '../src/store/port.js';

/** A fixed epoch: the port takes every time as an argument, so the contract never reads a clock. */
const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

const userMessage = (messageId: string, text = 'hello'): Message => ({
  messageId,
  role: 'ROLE_USER',
  parts: [{ text }],
});

const agentMessage = (text: string): Message => ({
  messageId: randomUUID(),
  role: 'ROLE_AGENT',
  parts: [{ text }],
});

function newTask(overrides: Partial<NewTask> = {}): NewTask {
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

const note = (text: string): TaskEvent => ({ kind: 'message', message: agentMessage(text) });

/**
 * The behaviour every {@link TaskStore} adapter must show. It uses only what src/store/port.ts
 * promises, so a new adapter runs it unchanged:
 *
 * @example
 * storeContract('postgres', async () => PostgresStore.open(freshDatabaseUrl()));
 */
export function storeContract(name: string, open: () => Promise<TaskStore>): void {
  describe(`TaskStore contract: ${name}`, () => {
    let store: TaskStore;

    beforeEach(async () => {
      store = await open();
    });

    afterEach(async () => {
      await store.close();
    });

    /** Creates a task and returns its record (asserting it was created). */
    async function create(overrides: Partial<NewTask> = {}): Promise<TaskRecord> {
      const { result, created } = await store.createTask(newTask(overrides));
      expect(created).toBe(true);
      return result.record;
    }

    const seqs = async (taskId: string) => (await store.readEvents(taskId, 0, 1000)).map((e) => e.seq);

    const write = (taskId: string, w: Partial<GuardedWrite>) =>
      store.write({ taskId, from: ['submitted'], events: [], at: T0 + 10, ...w });

    async function listAll(filter: Omit<ListFilter, 'pageToken'>): Promise<TaskRecord[]> {
      const all: TaskRecord[] = [];
      let pageToken: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await store.listTasks({ ...filter, pageToken });
        expect(page.records.length).toBeLessThanOrEqual(filter.pageSize);
        all.push(...page.records);
        if (page.nextPageToken === '') return all;
        pageToken = page.nextPageToken;
      }
      throw new Error('listTasks never returned an empty nextPageToken');
    }

    describe('createTask', () => {
      it('inserts the task and its events with seq 1..n and returns created: true', async () => {
        const task = newTask({ events: [...newTask().events, note('queued')] });
        const { result, created } = await store.createTask(task);
        expect(created).toBe(true);
        expect(result.duplicate).toBeFalsy();
        expect(result.record).toMatchObject({
          id: task.id,
          contextId: 'ctx-1',
          owner: 'alice',
          skill: 'echo',
          state: 'submitted',
          input: { text: 'hi', n: 1 },
          metadata: { origin: 'contract' },
          createdAt: T0,
          updatedAt: T0,
          expiresAt: T0 + HOUR,
          ttlMs: HOUR,
          pollIntervalMs: 1000,
          lastSeq: 3,
          attempts: 0,
          cancelRequested: false,
        });
        expect(result.record.statusMessage).toBeUndefined();
        expect(result.events).toEqual(
          task.events.map((event, i) => ({ taskId: task.id, seq: i + 1, at: T0, event })),
        );
        expect(await store.readEvents(task.id, 0, 100)).toEqual(result.events);
        expect(await store.getTask(task.id, T0)).toEqual(result.record);
      });

      it('keeps a task without metadata or input as such', async () => {
        const record = await create({ metadata: undefined, input: undefined });
        const stored = await store.getTask(record.id, T0);
        expect(stored?.metadata).toBeUndefined();
        expect(stored?.input).toBeUndefined();
      });

      it('returns the first task with created: false for a second create with the same (owner, messageId), writing nothing', async () => {
        const first = newTask({ messageId: 'm-1' });
        await store.createTask(first);
        const second = newTask({ messageId: 'm-1', skill: 'other' });
        const { result, created } = await store.createTask(second);
        expect(created).toBe(false);
        expect(result.record.id).toBe(first.id);
        expect(result.record.skill).toBe('echo');
        expect(result.events).toEqual([]);
        expect(await store.getTask(second.id, T0)).toBeUndefined();
        expect(await store.readEvents(second.id, 0, 100)).toEqual([]);
        expect(await seqs(first.id)).toEqual([1, 2]);
        const page = await store.listTasks({ owner: 'alice', pageSize: 10, now: T0 });
        expect(page.totalSize).toBe(1);
      });

      it('makes a new task for the same messageId from another owner', async () => {
        const a = await create({ messageId: 'shared', owner: 'alice' });
        const b = await create({ messageId: 'shared', owner: 'bob' });
        expect(b.id).not.toBe(a.id);
        expect((await store.findByMessageId('alice', 'shared'))?.id).toBe(a.id);
        expect((await store.findByMessageId('bob', 'shared'))?.id).toBe(b.id);
      });

      it('writes nothing when an event cannot be stored (task and events are one transaction)', async () => {
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        const task = newTask({
          messageId: 'm-atomic',
          events: [
            { kind: 'status', state: 'submitted' },
            { kind: 'message', message: { ...userMessage('x'), metadata: cyclic } },
          ],
        });
        await expect(store.createTask(task)).rejects.toThrow();
        expect(await store.getTask(task.id, T0)).toBeUndefined();
        expect(await store.findByMessageId('alice', 'm-atomic')).toBeUndefined();
        expect(await store.readEvents(task.id, 0, 100)).toEqual([]);
        // The message id is still free.
        const { created } = await store.createTask(newTask({ messageId: 'm-atomic' }));
        expect(created).toBe(true);
      });
    });

    describe('findByMessageId', () => {
      it('finds the task a message created, and nothing for unknown ids or other owners', async () => {
        const record = await create({ messageId: 'm-find' });
        expect(await store.findByMessageId('alice', 'm-find')).toEqual(record);
        expect(await store.findByMessageId('alice', 'nope')).toBeUndefined();
        expect(await store.findByMessageId('bob', 'm-find')).toBeUndefined();
      });
    });

    describe('write', () => {
      it('applies a transition while the state is in `from`, appending its events', async () => {
        const record = await create();
        const message = agentMessage('stopped');
        const result = await write(record.id, {
          from: ['submitted', 'working'],
          to: 'canceled',
          statusMessage: message,
          events: [{ kind: 'status', state: 'canceled', message }],
          at: T0 + 50,
        });
        expect(result?.duplicate).toBeFalsy();
        expect(result?.record).toMatchObject({
          state: 'canceled',
          statusMessage: message,
          updatedAt: T0 + 50,
        });
        expect(result?.record.lastSeq).toBe(3);
        expect(result?.events).toEqual([
          { taskId: record.id, seq: 3, at: T0 + 50, event: { kind: 'status', state: 'canceled', message } },
        ]);
        expect(await store.getTask(record.id, T0 + 50)).toEqual(result?.record);
      });

      it('returns undefined and writes nothing when the state is not in `from`', async () => {
        const record = await create();
        const result = await write(record.id, {
          from: ['working'],
          to: 'completed',
          events: [{ kind: 'status', state: 'completed' }],
          at: T0 + 50,
        });
        expect(result).toBeUndefined();
        expect(await store.getTask(record.id, T0)).toEqual(record);
        expect(await seqs(record.id)).toEqual([1, 2]);
      });

      it('returns undefined for an unknown task', async () => {
        expect(await write('no-such-task', { events: [note('x')] })).toBeUndefined();
      });

      it('appends events without a state change when `to` is omitted, keeping the status message', async () => {
        const record = await create();
        const message = agentMessage('waiting');
        await write(record.id, { to: 'working', statusMessage: message, events: [] });
        const result = await write(record.id, {
          from: ['working'],
          events: [note('one'), note('two')],
          at: T0 + 20,
        });
        expect(result?.record).toMatchObject({ state: 'working', statusMessage: message, lastSeq: 4 });
        expect(result?.events.map((e) => e.seq)).toEqual([3, 4]);
      });

      it('stores progress and poll interval', async () => {
        const record = await create();
        const result = await write(record.id, {
          progress: { percent: 40, message: 'almost' },
          pollIntervalMs: 250,
          events: [{ kind: 'progress', progress: { percent: 40, message: 'almost' } }],
        });
        expect(result?.record.progress).toEqual({ percent: 40, message: 'almost' });
        expect(result?.record.pollIntervalMs).toBe(250);
        expect((await store.getTask(record.id, T0))?.progress).toEqual({ percent: 40, message: 'almost' });
      });

      it('writes nothing when an event cannot be stored (state and events are one transaction)', async () => {
        const record = await create();
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        await expect(
          write(record.id, {
            to: 'canceled',
            events: [
              { kind: 'status', state: 'canceled' },
              { kind: 'message', message: { ...agentMessage('x'), metadata: cyclic } },
            ],
          }),
        ).rejects.toThrow();
        expect(await store.getTask(record.id, T0)).toEqual(record);
        expect(await seqs(record.id)).toEqual([1, 2]);
      });

      it('gives events gap-free increasing seq, also under parallel writes', async () => {
        const record = await create();
        await write(record.id, { events: [] });
        await write(record.id, { events: [note('a')] });
        await write(record.id, { events: [note('b'), note('c'), note('d')] });
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => write(record.id, { events: [note(`p${i}`)] })),
        );
        const expected = Array.from({ length: 26 }, (_, i) => i + 1);
        expect(await seqs(record.id)).toEqual(expected);
        expect((await store.getTask(record.id, T0))?.lastSeq).toBe(26);
      });

      it('refuses a write with a wrong lease token, and one with a token on an unleased task', async () => {
        const record = await create();
        expect(await write(record.id, { leaseToken: 'not-a-lease', events: [note('x')] })).toBeUndefined();
        const [claim] = await store.claim('w1', T0, 1000, 1);
        expect(claim?.record.id).toBe(record.id);
        const token = claim?.leaseToken ?? '';
        const refused = await write(record.id, {
          from: ['working'],
          to: 'completed',
          leaseToken: `${token}-wrong`,
          events: [{ kind: 'status', state: 'completed' }],
        });
        expect(refused).toBeUndefined();
        expect((await store.getTask(record.id, T0))?.state).toBe('working');
        const applied = await write(record.id, {
          from: ['working'],
          to: 'completed',
          leaseToken: token,
          releaseLease: true,
          events: [{ kind: 'status', state: 'completed' }],
        });
        expect(applied?.record.state).toBe('completed');
        expect(await seqs(record.id)).toEqual([1, 2, 3, 4]);
      });

      it('releaseLease drops the lease in the same write', async () => {
        const record = await create();
        const [claim] = await store.claim('w1', T0, 1000, 1);
        const token = claim?.leaseToken ?? '';
        const parked = await write(record.id, {
          from: ['working'],
          to: 'input-required',
          leaseToken: token,
          releaseLease: true,
          events: [{ kind: 'status', state: 'input-required' }],
        });
        expect(parked?.record.state).toBe('input-required');
        expect((await store.renewLease(record.id, token, T0 + 5000)).held).toBe(false);
        expect(
          await write(record.id, { from: ['input-required'], leaseToken: token, events: [] }),
        ).toBeUndefined();
        // Answered, it is queued again and claimed as a fresh run.
        await write(record.id, {
          from: ['input-required'],
          to: 'submitted',
          events: [{ kind: 'status', state: 'submitted' }],
        });
        const [again] = await store.claim('w2', T0 + 1, 1000, 1);
        expect(again).toMatchObject({
          interrupted: false,
          record: { id: record.id, state: 'working', attempts: 2 },
        });
      });

      it('with dedupe, delivers a message once and reports duplicate: true after', async () => {
        const record = await create();
        const dedupe = { owner: 'alice', messageId: 'follow-up' };
        const w: GuardedWrite = {
          taskId: record.id,
          from: ['submitted'],
          events: [{ kind: 'message', message: userMessage('follow-up', 'more') }],
          at: T0 + 5,
        };
        const first = await store.write(w, dedupe);
        expect(first?.duplicate).toBeFalsy();
        expect(first?.events.map((e) => e.seq)).toEqual([3]);
        const second = await store.write({ ...w, at: T0 + 6 }, dedupe);
        expect(second?.duplicate).toBe(true);
        expect(second?.events).toEqual([]);
        expect(second?.record.id).toBe(record.id);
        expect(second?.record.lastSeq).toBe(3);
        expect(await seqs(record.id)).toEqual([1, 2, 3]);
        expect((await store.findByMessageId('alice', 'follow-up'))?.id).toBe(record.id);
        // Another owner's message with the same id is its own delivery.
        const other = await store.write(w, { owner: 'bob', messageId: 'follow-up' });
        expect(other?.duplicate).toBeFalsy();
      });

      it('with dedupe, treats the message that created a task as delivered', async () => {
        const record = await create({ messageId: 'creator' });
        const result = await store.write(
          { taskId: record.id, from: ['submitted'], events: [note('y')], at: T0 + 9 },
          { owner: 'alice', messageId: 'creator' },
        );
        expect(result?.duplicate).toBe(true);
        expect(await seqs(record.id)).toEqual([1, 2]);
      });

      it('with dedupe, records nothing when the guarded write conflicts (a retry can still deliver it)', async () => {
        const record = await create();
        const dedupe = { owner: 'alice', messageId: 'late' };
        const event: TaskEvent = { kind: 'message', message: userMessage('late') };
        const w = { taskId: record.id, events: [event], at: T0 + 5 };
        expect(await store.write({ ...w, from: ['working'] }, dedupe)).toBeUndefined();
        expect(await store.findByMessageId('alice', 'late')).toBeUndefined();
        const retried = await store.write({ ...w, from: ['submitted'] }, dedupe);
        expect(retried?.duplicate).toBeFalsy();
        expect(await seqs(record.id)).toEqual([1, 2, 3]);
      });
    });

    describe('getTask and getTaskWithLog', () => {
      it('hide a task once expiresAt <= now', async () => {
        const record = await create({ expiresAt: T0 + 1000 });
        expect(await store.getTask(record.id, T0 + 999)).toEqual(record);
        expect((await store.getTaskWithLog(record.id, T0 + 999))?.record).toEqual(record);
        expect(await store.getTask(record.id, T0 + 1000)).toBeUndefined();
        expect(await store.getTaskWithLog(record.id, T0 + 1000)).toBeUndefined();
        expect(await store.getTask(record.id, T0 + 5000)).toBeUndefined();
      });

      it('return undefined for an unknown id', async () => {
        expect(await store.getTask('nope', T0)).toBeUndefined();
        expect(await store.getTaskWithLog('nope', T0)).toBeUndefined();
      });

      it('getTaskWithLog gives the record and its log oldest first, without progress events', async () => {
        const record = await create();
        await write(record.id, { to: 'working', events: [{ kind: 'status', state: 'working' }] });
        const artifact: TaskEvent = {
          kind: 'artifact',
          artifact: { artifactId: 'a1', parts: [{ text: 'x' }] },
          append: false,
          lastChunk: true,
        };
        await write(record.id, {
          from: ['working'],
          progress: { percent: 50 },
          events: [{ kind: 'progress', progress: { percent: 50 } }, artifact],
        });
        const found = await store.getTaskWithLog(record.id, T0 + 10);
        expect(found?.record).toEqual(await store.getTask(record.id, T0 + 10));
        expect(found?.log.map((e) => e.seq)).toEqual([1, 2, 3, 5]);
        expect(found?.log.map((e) => e.event.kind)).toEqual(['message', 'status', 'status', 'artifact']);
        expect(found?.log[3]?.event).toEqual(artifact);
        // readEvents still has the progress event.
        expect((await store.readEvents(record.id, 0, 100)).map((e) => e.event.kind)).toContain('progress');
      });
    });

    describe('readEvents', () => {
      it('returns events with seq > afterSeq, oldest first, at most limit', async () => {
        const record = await create();
        await write(record.id, { events: [note('3'), note('4'), note('5')] });
        const page = await store.readEvents(record.id, 2, 2);
        expect(page.map((e) => e.seq)).toEqual([3, 4]);
        expect(page[0]?.event).toMatchObject({ kind: 'message', message: { parts: [{ text: '3' }] } });
        expect((await store.readEvents(record.id, 4, 10)).map((e) => e.seq)).toEqual([5]);
        expect(await store.readEvents(record.id, 5, 10)).toEqual([]);
        expect(await store.readEvents('nope', 0, 10)).toEqual([]);
      });

      it('keeps each task’s log apart', async () => {
        const a = await create();
        const b = await create();
        await write(b.id, { events: [note('b')] });
        expect(await seqs(a.id)).toEqual([1, 2]);
        expect((await store.readEvents(b.id, 0, 10)).every((e) => e.taskId === b.id)).toBe(true);
      });
    });

    describe('listTasks', () => {
      const base = { owner: 'alice', pageSize: 50, now: T0 + 100 };

      it('lists only the owner’s unexpired tasks, newest update first, with totalSize', async () => {
        const a1 = await create({ createdAt: T0 + 1 });
        const a2 = await create({ createdAt: T0 + 2 });
        const a3 = await create({ createdAt: T0 + 3 });
        await create({ owner: 'bob', createdAt: T0 + 4 });
        await create({ createdAt: T0 + 5, expiresAt: T0 + 50 });
        // An update moves a task to the front.
        await write(a1.id, { events: [note('bump')], at: T0 + 60 });
        const page = await store.listTasks(base);
        expect(page.records.map((r) => r.id)).toEqual([a1.id, a3.id, a2.id]);
        expect(page.totalSize).toBe(3);
        expect(page.nextPageToken).toBe('');
        expect(page.records.every((r) => r.owner === 'alice')).toBe(true);
        expect((await store.listTasks({ ...base, owner: 'carol' })).totalSize).toBe(0);
        expect((await store.listTasks({ ...base, owner: 'carol' })).records).toEqual([]);
      });

      it('filters by contextId, state and statusAfter', async () => {
        const x1 = await create({ contextId: 'x', createdAt: T0 + 1 });
        const x2 = await create({ contextId: 'x', createdAt: T0 + 2 });
        const y1 = await create({ contextId: 'y', createdAt: T0 + 3 });
        await write(x1.id, { to: 'canceled', events: [{ kind: 'status', state: 'canceled' }], at: T0 + 40 });

        const byContext = await store.listTasks({ ...base, contextId: 'x' });
        expect(byContext.records.map((r) => r.id)).toEqual([x1.id, x2.id]);
        expect(byContext.totalSize).toBe(2);

        const byState = await store.listTasks({ ...base, state: 'submitted' });
        expect(byState.records.map((r) => r.id)).toEqual([y1.id, x2.id]);
        expect(byState.totalSize).toBe(2);

        const both = await store.listTasks({ ...base, contextId: 'x', state: 'canceled' });
        expect(both.records.map((r) => r.id)).toEqual([x1.id]);

        const recent = await store.listTasks({ ...base, statusAfter: T0 + 20 });
        expect(recent.records.map((r) => r.id)).toEqual([x1.id]);
        expect(recent.totalSize).toBe(1);

        const none = await store.listTasks({ ...base, contextId: 'y', state: 'canceled' });
        expect(none).toEqual({ records: [], nextPageToken: '', totalSize: 0 });
      });

      it('pages with pageToken until nextPageToken is empty, without duplicates or gaps', async () => {
        const ids: string[] = [];
        // Several tasks share an updatedAt, so the cursor must break ties.
        for (let i = 0; i < 11; i++) ids.push((await create({ createdAt: T0 + Math.floor(i / 3) })).id);
        await create({ owner: 'bob' });
        const first = await store.listTasks({ ...base, pageSize: 4 });
        expect(first.records).toHaveLength(4);
        expect(first.totalSize).toBe(11);
        expect(first.nextPageToken).not.toBe('');
        const second = await store.listTasks({ ...base, pageSize: 4, pageToken: first.nextPageToken });
        expect(second.totalSize).toBe(11);

        const all = await listAll({ ...base, pageSize: 4 });
        expect(all).toHaveLength(11);
        expect(new Set(all.map((r) => r.id))).toEqual(new Set(ids));
        for (let i = 1; i < all.length; i++) {
          expect((all[i - 1]?.updatedAt ?? 0) >= (all[i]?.updatedAt ?? 0)).toBe(true);
        }
        for (const size of [1, 2, 3, 11, 12]) {
          expect((await listAll({ ...base, pageSize: size })).map((r) => r.id)).toEqual(all.map((r) => r.id));
        }
        const filtered = await listAll({ ...base, pageSize: 2, statusAfter: T0 + 1 });
        expect(filtered).toHaveLength(5);
      });

      it('rejects an invalid pageToken with an EngineError invalid-params', async () => {
        await create();
        for (const pageToken of ['not-a-token', '!!!', Buffer.from('abc:def').toString('base64url')]) {
          const error = await store.listTasks({ ...base, pageToken }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(isEngineError(error), `pageToken ${pageToken}`).toBe(true);
          expect(error).toMatchObject({ code: 'invalid-params' });
        }
      });
    });

    describe('claim', () => {
      it('claims submitted tasks, moving each to working with one working status event', async () => {
        const a = await create({ createdAt: T0 + 1 });
        const b = await create({ createdAt: T0 + 2 });
        const claimed = await store.claim('w1', T0 + 10, 1000, 10);
        expect(claimed.map((c) => c.record.id).sort()).toEqual([a.id, b.id].sort());
        for (const c of claimed) {
          expect(c.interrupted).toBe(false);
          expect(c.leaseToken).toEqual(expect.any(String));
          expect(c.leaseToken.length).toBeGreaterThan(0);
          expect(c.record).toMatchObject({ state: 'working', attempts: 1, lastSeq: 3, updatedAt: T0 + 10 });
          expect(c.events).toEqual([
            { taskId: c.record.id, seq: 3, at: T0 + 10, event: { kind: 'status', state: 'working' } },
          ]);
          expect(await store.readEvents(c.record.id, 2, 10)).toEqual(c.events);
          expect(await store.getTask(c.record.id, T0 + 10)).toEqual(c.record);
        }
        expect(claimed[0]?.leaseToken).not.toBe(claimed[1]?.leaseToken);
      });

      it('never claims a task twice while its lease is valid', async () => {
        await create();
        expect(await store.claim('w1', T0, 1000, 10)).toHaveLength(1);
        expect(await store.claim('w1', T0 + 1, 1000, 10)).toEqual([]);
        expect(await store.claim('w2', T0 + 999, 1000, 10)).toEqual([]);
      });

      it('claims a working task whose lease expired, with interrupted: true and a new token', async () => {
        const record = await create();
        const [first] = await store.claim('w1', T0, 1000, 10);
        const [second, ...rest] = await store.claim('w2', T0 + 1001, 1000, 10);
        expect(rest).toEqual([]);
        expect(second?.interrupted).toBe(true);
        expect(second?.record).toMatchObject({ id: record.id, state: 'working', attempts: 2 });
        expect(second?.leaseToken).not.toBe(first?.leaseToken);
        expect(second?.events).toEqual([]);
        // The dead runner's lease is gone: it can neither renew nor write.
        expect((await store.renewLease(record.id, first?.leaseToken ?? '', T0 + 5000)).held).toBe(false);
        expect(
          await write(record.id, {
            from: ['working'],
            leaseToken: first?.leaseToken ?? '',
            events: [note('x')],
          }),
        ).toBeUndefined();
        expect(await seqs(record.id)).toEqual([1, 2, 3]);
        // And the new holder's lease is valid.
        expect(await store.claim('w3', T0 + 1500, 1000, 10)).toEqual([]);
      });

      it('respects limit and claims each task once', async () => {
        for (let i = 0; i < 5; i++) await create({ createdAt: T0 + i });
        const first = await store.claim('w1', T0 + 10, 1000, 2);
        const second = await store.claim('w1', T0 + 10, 1000, 2);
        const third = await store.claim('w1', T0 + 10, 1000, 10);
        expect([first.length, second.length, third.length]).toEqual([2, 2, 1]);
        const ids = [...first, ...second, ...third].map((c) => c.record.id);
        expect(new Set(ids).size).toBe(5);
        expect(await store.claim('w1', T0 + 10, 1000, 10)).toEqual([]);
      });

      it('claims no task that waits for its caller or has ended', async () => {
        const parked = await create();
        const done = await create();
        await write(parked.id, {
          to: 'input-required',
          events: [{ kind: 'status', state: 'input-required' }],
        });
        await write(done.id, { to: 'completed', events: [{ kind: 'status', state: 'completed' }] });
        expect(await store.claim('w1', T0 + 10_000, 1000, 10)).toEqual([]);
      });

      it('claims no expired task, queued or with an expired lease', async () => {
        const running = await create({ expiresAt: T0 + 3000 });
        const [first] = await store.claim('w1', T0, 1000, 10);
        expect(first?.record.id).toBe(running.id);
        await create({ expiresAt: T0 + 100 });
        // The queued task has expired; the claimed one is still leased.
        expect(await store.claim('w2', T0 + 100, 1000, 10)).toEqual([]);
        // Long after its lease ran out the claimed one has expired too: nobody takes it over.
        expect(await store.claim('w2', T0 + 3000, 1000, 10)).toEqual([]);
        // Just before, it would have been taken over.
        expect((await store.claim('w2', T0 + 2999, 1000, 10)).map((c) => c.record.id)).toEqual([running.id]);
      });

      it('hands out no task twice to many parallel claims from several workers', async () => {
        const ids = new Set<string>();
        for (let i = 0; i < 30; i++) ids.add((await create({ createdAt: T0 + i })).id);
        const attempt = (now: number) =>
          Promise.all(
            Array.from({ length: 24 }, (_, i) => store.claim(`worker-${i % 4}`, now, 1000, 3)),
          ).then((batches) => batches.flat());
        const fresh = await attempt(T0 + 100);
        expect(fresh.map((c) => c.record.id).sort()).toEqual([...ids].sort());
        expect(fresh.every((c) => !c.interrupted)).toBe(true);
        // After every lease expired, each task is taken over exactly once too.
        const takeover = await attempt(T0 + 5000);
        expect(takeover.map((c) => c.record.id).sort()).toEqual([...ids].sort());
        expect(takeover.every((c) => c.interrupted)).toBe(true);
        for (const id of ids) {
          const statuses = (await store.readEvents(id, 0, 100)).filter(
            (e) => e.event.kind === 'status' && e.event.state === 'working',
          );
          expect(statuses).toHaveLength(1);
        }
      });
    });

    describe('leases', () => {
      it('renewLease extends a held lease and reports held: false for a wrong token', async () => {
        const record = await create();
        const [claim] = await store.claim('w1', T0, 1000, 1);
        const token = claim?.leaseToken ?? '';
        expect(await store.renewLease(record.id, token, T0 + 5000)).toEqual({
          held: true,
          cancelRequested: false,
        });
        expect(await store.claim('w2', T0 + 2000, 1000, 10)).toEqual([]);
        expect((await store.renewLease(record.id, 'wrong', T0 + 5000)).held).toBe(false);
        expect((await store.renewLease('nope', token, T0 + 5000)).held).toBe(false);
      });

      it('renewLease reports cancelRequested after requestCancel', async () => {
        const record = await create();
        const [claim] = await store.claim('w1', T0, 1000, 1);
        await store.requestCancel(record.id);
        expect(await store.renewLease(record.id, claim?.leaseToken ?? '', T0 + 500)).toEqual({
          held: true,
          cancelRequested: true,
        });
        expect((await store.getTask(record.id, T0))?.cancelRequested).toBe(true);
        await expect(store.requestCancel('nope')).resolves.toBeUndefined();
      });

      it('renewLease reports held: false once the task left working', async () => {
        const record = await create();
        const [claim] = await store.claim('w1', T0, 1000, 1);
        const token = claim?.leaseToken ?? '';
        await write(record.id, {
          from: ['working'],
          to: 'completed',
          leaseToken: token,
          events: [{ kind: 'status', state: 'completed' }],
        });
        expect((await store.renewLease(record.id, token, T0 + 500)).held).toBe(false);
      });

      it('releaseLease makes the task claimable at once, as interrupted', async () => {
        const record = await create();
        const [claim] = await store.claim('w1', T0, 60_000, 1);
        const token = claim?.leaseToken ?? '';
        await store.releaseLease(record.id, 'wrong');
        expect(await store.claim('w2', T0 + 1, 60_000, 10)).toEqual([]);
        await store.releaseLease(record.id, token);
        expect((await store.renewLease(record.id, token, T0 + 500)).held).toBe(false);
        const [again] = await store.claim('w2', T0 + 1, 60_000, 10);
        expect(again).toMatchObject({ interrupted: true, record: { id: record.id, state: 'working' } });
      });
    });

    describe('deleteExpired', () => {
      it('deletes expired tasks with their events and message ids in batches, returning the count', async () => {
        const expired: TaskRecord[] = [];
        for (let i = 0; i < 5; i++)
          expired.push(await create({ expiresAt: T0 + 100, messageId: `old-${i}` }));
        const kept = await create({ expiresAt: T0 + 10_000, messageId: 'young' });
        expect(await store.deleteExpired(T0 + 99, 10)).toBe(0);
        expect(await store.deleteExpired(T0 + 100, 2)).toBe(2);
        expect(await store.deleteExpired(T0 + 100, 2)).toBe(2);
        expect(await store.deleteExpired(T0 + 100, 2)).toBe(1);
        expect(await store.deleteExpired(T0 + 100, 2)).toBe(0);
        for (const [i, record] of expired.entries()) {
          expect(await store.getTask(record.id, T0)).toBeUndefined();
          expect(await store.getTaskWithLog(record.id, T0)).toBeUndefined();
          expect(await store.readEvents(record.id, 0, 100)).toEqual([]);
          expect(await store.findByMessageId('alice', `old-${i}`)).toBeUndefined();
        }
        expect(await store.getTask(kept.id, T0 + 100)).toEqual(kept);
        expect(await seqs(kept.id)).toEqual([1, 2]);
        expect((await store.findByMessageId('alice', 'young'))?.id).toBe(kept.id);
        // A deleted task's message id may create a new task.
        const { created } = await store.createTask(newTask({ messageId: 'old-0', createdAt: T0 + 200 }));
        expect(created).toBe(true);
      });

      it('deletes the message ids of follow-up messages too', async () => {
        const record = await create({ expiresAt: T0 + 100 });
        await store.write(
          { taskId: record.id, from: ['submitted'], events: [note('x')], at: T0 + 1 },
          { owner: 'alice', messageId: 'follow-up' },
        );
        expect(await store.deleteExpired(T0 + 100, 10)).toBe(1);
        expect(await store.findByMessageId('alice', 'follow-up')).toBeUndefined();
      });
    });

    it('ping resolves', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('close is idempotent', async () => {
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
    });
  });
}
