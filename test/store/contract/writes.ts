import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/engine/events.js';
import type { GuardedWrite, NewTask } from '../../../src/engine/store-port.js';
import { agentMessage, type Contract, HOUR, newTask, note, T0, userMessage } from './context.js';

/** createTask, findByMessageId and guarded writes. */
export function writeContract(c: Contract): void {
  const { create, seqs, write } = c;
  describe('createTask', () => {
    it('inserts the task and its events with seq 1..n and returns created: true', async () => {
      const task = newTask({ events: [...newTask().events, note('queued')] });
      const { result, created } = await c.store.createTask(task);
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
        pushConfigs: 0,
      });
      expect(result.record.statusMessage).toBeUndefined();
      expect(result.events).toEqual(
        task.events.map((event, i) => ({ taskId: task.id, seq: i + 1, at: T0, event })),
      );
      expect(await c.store.readEvents(task.id, 0, 100)).toEqual(result.events);
      expect(await c.store.getTask(task.id, T0)).toEqual(result.record);
    });

    it('answers a task with every optional field exactly as getTask then reads it', async () => {
      const task = newTask({
        tenant: 'acme',
        priority: 3,
        queueAt: T0 - 180_000,
        metadata: undefined,
        trace: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'v=1' },
      });
      const { result } = await c.store.createTask(task);
      expect(result.record).toMatchObject({ tenant: 'acme', priority: 3, queueAt: T0 - 180_000, retries: 0 });
      expect(await c.store.getTask(task.id, T0)).toEqual(result.record);
      expect((await c.store.getTaskWithLog(task.id, T0))?.record).toEqual(result.record);
    });

    it('keeps the creating span (trace context) with the task, and none when none was given', async () => {
      const trace = {
        traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
        tracestate: 'vendor=opaque',
      };
      const traced = await create({ trace });
      expect(traced.trace).toEqual(trace);
      expect((await c.store.getTask(traced.id, T0))?.trace).toEqual(trace);
      const [claimed] = await c.store.claim('w1', T0 + 1, 30_000, 1);
      expect(claimed?.record.trace).toEqual(trace);
      const bare = await create({ trace: { traceparent: trace.traceparent } });
      expect((await c.store.getTask(bare.id, T0))?.trace).toEqual({ traceparent: trace.traceparent });
      const untraced = await create();
      expect(untraced.trace).toBeUndefined();
      expect((await c.store.getTaskWithLog(untraced.id, T0))?.record.trace).toBeUndefined();
    });

    it('keeps a task without metadata or input as such', async () => {
      const record = await create({ metadata: undefined, input: undefined });
      const stored = await c.store.getTask(record.id, T0);
      expect(stored?.metadata).toBeUndefined();
      expect(stored?.input).toBeUndefined();
    });

    it('returns the first task with created: false for a second create with the same (owner, messageId), writing nothing', async () => {
      const first = newTask({ messageId: 'm-1' });
      await c.store.createTask(first);
      const second = newTask({ messageId: 'm-1', skill: 'other' });
      const { result, created } = await c.store.createTask(second);
      expect(created).toBe(false);
      expect(result.record.id).toBe(first.id);
      expect(result.record.skill).toBe('echo');
      expect(result.events).toEqual([]);
      expect(await c.store.getTask(second.id, T0)).toBeUndefined();
      expect(await c.store.readEvents(second.id, 0, 100)).toEqual([]);
      expect(await seqs(first.id)).toEqual([1, 2]);
      const page = await c.store.listTasks({ owner: 'alice', pageSize: 10, now: T0 });
      expect(page.totalSize).toBe(1);
    });

    it('refuses a create past maxActive unfinished tasks of the owner, in its own transaction', async () => {
      await create({ owner: 'alice', messageId: 'a1' });
      await create({ owner: 'alice', messageId: 'a2' });
      const third = newTask({ owner: 'alice', messageId: 'a3', maxActive: 2 });
      const refused = await c.store.createTask(third).catch((e: unknown) => e);
      expect(refused).toMatchObject({ name: 'TooManyTasks', active: 2 });
      expect(await c.store.getTask(third.id, T0)).toBeUndefined();
      expect(await c.store.findByMessageId('alice', 'a3')).toBeUndefined();
      // Others have their own count; a retry of a delivered message is not a new task.
      expect((await c.store.createTask(newTask({ owner: 'bob', maxActive: 2 }))).created).toBe(true);
      const retry = await c.store.createTask(newTask({ owner: 'alice', messageId: 'a1', maxActive: 2 }));
      expect(retry.created).toBe(false);
      // A finished task no longer counts.
      const [one] = (await c.store.listTasks({ owner: 'alice', pageSize: 1, now: T0 })).records;
      await c.store.write({
        taskId: one?.id ?? '',
        from: ['submitted'],
        to: 'canceled',
        events: [],
        at: T0 + 1,
      });
      expect(
        (await c.store.createTask(newTask({ owner: 'alice', messageId: 'a4', maxActive: 2 }))).created,
      ).toBe(true);
    });

    it('holds maxActive exactly create after create: refused at it, let through again as tasks end or expire', async () => {
      const make = (n: number, o: Partial<NewTask> = {}) =>
        c.store.createTask(newTask({ owner: 'erin', messageId: `e${n}`, maxActive: 4, ...o })).then(
          (r) => r.result.record.id,
          (e: unknown) => e,
        );
      const ids = [await make(1), await make(2, { expiresAt: T0 + 50 }), await make(3), await make(4)];
      expect(ids.every((id) => typeof id === 'string')).toBe(true);
      expect(await make(5)).toMatchObject({ name: 'TooManyTasks', active: 4 });
      await c.store.write({
        taskId: ids[0] as string,
        from: ['submitted'],
        to: 'completed',
        events: [],
        at: T0 + 1,
      });
      expect(typeof (await make(6))).toBe('string');
      expect(await make(7)).toMatchObject({ name: 'TooManyTasks' });
      // Past its expiry a task no longer counts, ended or not.
      expect(typeof (await make(8, { createdAt: T0 + 60 }))).toBe('string');
      expect(await make(9, { createdAt: T0 + 60 })).toMatchObject({ name: 'TooManyTasks' });
    });

    it('counts queued, running and waiting tasks toward maxActive, not ended ones', async () => {
      const queued = await create({ owner: 'carol', messageId: 'c1' });
      const running = await create({ owner: 'carol', messageId: 'c2', createdAt: T0 + 1 });
      const waiting = await create({ owner: 'carol', messageId: 'c3', createdAt: T0 + 2 });
      const claimed = await c.store.claim('w1', T0 + 5, 60_000, 3);
      const leaseOf = (id: string) => claimed.find((x) => x.record.id === id)?.leaseToken;
      await c.store.write({
        taskId: waiting.id,
        from: ['working'],
        to: 'input-required',
        leaseToken: leaseOf(waiting.id),
        releaseLease: true,
        events: [],
        at: T0 + 6,
      });
      await c.store.write({
        taskId: queued.id,
        from: ['working'],
        to: 'submitted',
        leaseToken: leaseOf(queued.id),
        releaseLease: true,
        events: [],
        at: T0 + 6,
      });
      const states = await Promise.all(
        [queued, running, waiting].map(async (t) => (await c.store.getTask(t.id, T0 + 7))?.state),
      );
      expect(states).toEqual(['submitted', 'working', 'input-required']);
      const fourth = await c.store
        .createTask(newTask({ owner: 'carol', messageId: 'c4', maxActive: 3, createdAt: T0 + 7 }))
        .catch((e: unknown) => e);
      expect(fourth).toMatchObject({ name: 'TooManyTasks', active: 3 });
      await c.store.write({
        taskId: waiting.id,
        from: ['input-required'],
        to: 'canceled',
        events: [],
        at: T0 + 8,
      });
      expect(
        (
          await c.store.createTask(
            newTask({ owner: 'carol', messageId: 'c5', maxActive: 3, createdAt: T0 + 9 }),
          )
        ).created,
      ).toBe(true);
    });

    it('makes a new task for the same messageId from another owner', async () => {
      const a = await create({ messageId: 'shared', owner: 'alice' });
      const b = await create({ messageId: 'shared', owner: 'bob' });
      expect(b.id).not.toBe(a.id);
      expect((await c.store.findByMessageId('alice', 'shared'))?.id).toBe(a.id);
      expect((await c.store.findByMessageId('bob', 'shared'))?.id).toBe(b.id);
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
      await expect(c.store.createTask(task)).rejects.toThrow();
      expect(await c.store.getTask(task.id, T0)).toBeUndefined();
      expect(await c.store.findByMessageId('alice', 'm-atomic')).toBeUndefined();
      expect(await c.store.readEvents(task.id, 0, 100)).toEqual([]);
      // The message id is still free.
      const { created } = await c.store.createTask(newTask({ messageId: 'm-atomic' }));
      expect(created).toBe(true);
    });
  });

  describe('findByMessageId', () => {
    it('finds the task a message created, and nothing for unknown ids or other owners', async () => {
      const record = await create({ messageId: 'm-find' });
      expect(await c.store.findByMessageId('alice', 'm-find')).toEqual(record);
      expect(await c.store.findByMessageId('alice', 'nope')).toBeUndefined();
      expect(await c.store.findByMessageId('bob', 'm-find')).toBeUndefined();
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
      expect(await c.store.getTask(record.id, T0 + 50)).toEqual(result?.record);
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
      expect(await c.store.getTask(record.id, T0)).toEqual(record);
      expect(await seqs(record.id)).toEqual([1, 2]);
    });

    it('with an approver, applies only while the task waits for that name (the grant holds at the write)', async () => {
      const record = await create();
      const waitFor = async (approvers: string[], at: number) =>
        write(record.id, {
          from: ['submitted', 'working'],
          to: 'input-required',
          approvers,
          events: [],
          at,
        });
      await write(record.id, { to: 'working', events: [] });
      await waitFor(['globex/bob'], T0 + 20);
      const answer = (approver: string, at: number) =>
        write(record.id, {
          from: ['input-required'],
          to: 'submitted',
          approver,
          events: [{ kind: 'message', message: userMessage(`m-${at}`, 'approve') }],
          at,
        });
      expect(await answer('jwt:globex/bob', T0 + 30)).toBeUndefined();
      expect(await c.store.getTask(record.id, T0 + 30)).toMatchObject({ state: 'input-required' });
      expect((await answer('globex/bob', T0 + 40))?.record.state).toBe('submitted');
      // A later wait naming someone else: bob's grant is gone, even though the state matches.
      await write(record.id, { to: 'working', events: [], at: T0 + 50 });
      await waitFor(['globex/carol'], T0 + 60);
      expect(await answer('globex/bob', T0 + 70)).toBeUndefined();
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
      expect((await c.store.getTask(record.id, T0))?.progress).toEqual({ percent: 40, message: 'almost' });
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
      expect(await c.store.getTask(record.id, T0)).toEqual(record);
      expect(await seqs(record.id)).toEqual([1, 2]);
    });

    it('gives events gap-free increasing seq, also under parallel writes', async () => {
      const record = await create();
      await write(record.id, { events: [] });
      await write(record.id, { events: [note('a')] });
      await write(record.id, { events: [note('b'), note('c'), note('d')] });
      await Promise.all(Array.from({ length: 20 }, (_, i) => write(record.id, { events: [note(`p${i}`)] })));
      const expected = Array.from({ length: 26 }, (_, i) => i + 1);
      expect(await seqs(record.id)).toEqual(expected);
      expect((await c.store.getTask(record.id, T0))?.lastSeq).toBe(26);
    });

    it('refuses a write with a wrong lease token, and one with a token on an unleased task', async () => {
      const record = await create();
      expect(await write(record.id, { leaseToken: 'not-a-lease', events: [note('x')] })).toBeUndefined();
      const [claim] = await c.store.claim('w1', T0, 1000, 1);
      expect(claim?.record.id).toBe(record.id);
      const token = claim?.leaseToken ?? '';
      const refused = await write(record.id, {
        from: ['working'],
        to: 'completed',
        leaseToken: `${token}-wrong`,
        events: [{ kind: 'status', state: 'completed' }],
      });
      expect(refused).toBeUndefined();
      expect((await c.store.getTask(record.id, T0))?.state).toBe('working');
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
      const [claim] = await c.store.claim('w1', T0, 1000, 1);
      const token = claim?.leaseToken ?? '';
      const parked = await write(record.id, {
        from: ['working'],
        to: 'input-required',
        leaseToken: token,
        releaseLease: true,
        events: [{ kind: 'status', state: 'input-required' }],
      });
      expect(parked?.record.state).toBe('input-required');
      expect((await c.store.renewLease(record.id, token, T0, T0 + 5000)).held).toBe(false);
      expect(
        await write(record.id, { from: ['input-required'], leaseToken: token, events: [] }),
      ).toBeUndefined();
      // Answered, it is queued again and claimed as a fresh run.
      await write(record.id, {
        from: ['input-required'],
        to: 'submitted',
        events: [{ kind: 'status', state: 'submitted' }],
      });
      const [again] = await c.store.claim('w2', T0 + 1, 1000, 1);
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
      const first = await c.store.write(w, dedupe);
      expect(first?.duplicate).toBeFalsy();
      expect(first?.events.map((e) => e.seq)).toEqual([3]);
      const second = await c.store.write({ ...w, at: T0 + 6 }, dedupe);
      expect(second?.duplicate).toBe(true);
      expect(second?.events).toEqual([]);
      expect(second?.record.id).toBe(record.id);
      expect(second?.record.lastSeq).toBe(3);
      expect(await seqs(record.id)).toEqual([1, 2, 3]);
      expect((await c.store.findByMessageId('alice', 'follow-up'))?.id).toBe(record.id);
      // Another owner's message with the same id is its own delivery.
      const other = await c.store.write(w, { owner: 'bob', messageId: 'follow-up' });
      expect(other?.duplicate).toBeFalsy();
    });

    it('with dedupe, treats the message that created a task as delivered', async () => {
      const record = await create({ messageId: 'creator' });
      const result = await c.store.write(
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
      expect(await c.store.write({ ...w, from: ['working'] }, dedupe)).toBeUndefined();
      expect(await c.store.findByMessageId('alice', 'late')).toBeUndefined();
      const retried = await c.store.write({ ...w, from: ['submitted'] }, dedupe);
      expect(retried?.duplicate).toBeFalsy();
      expect(await seqs(record.id)).toEqual([1, 2, 3]);
    });
  });
}
