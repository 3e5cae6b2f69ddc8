import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../../src/engine/events.js';
import type { PushConfig } from '../../../src/engine/push.js';
import type { NewTask } from '../../../src/engine/store-port.js';
import { type Contract, newTask, T0 } from './context.js';

/** How one create was answered, told apart from the owner names and ids of its scenario. */
interface Answer {
  created?: boolean;
  /** The position of the create whose task answered it. */
  task?: number;
  lastSeq?: number;
  pushConfigs?: number;
  counts?: unknown;
  refused?: unknown;
}

/**
 * 32 creates: duplicates among them (one id twice, one three times), one of an owner already at
 * its limit, one with a webhook given with its first message, every one counting its standing.
 * Positions give the queue order, so one at a time and all at once can be compared.
 */
function scenario(prefix: string): NewTask[] {
  const messageIds = Array.from({ length: 32 }, (_, i) => `${prefix}-m${i}`);
  messageIds[6] = messageIds[5] as string;
  messageIds[11] = messageIds[10] as string;
  messageIds[12] = messageIds[10] as string;
  return messageIds.map((messageId, i) => {
    const owner = i === 20 ? `${prefix}-limited` : `${prefix}-owner`;
    const id = `${prefix}-t${String(i).padStart(2, '0')}`;
    const status: TaskEvent = { kind: 'status', state: 'submitted' };
    const webhook: PushConfig = {
      taskId: id,
      id: 'hook',
      url: 'https://hooks.example/a',
      allEvents: true,
      format: 'a2a-v1',
      createdAt: T0,
    };
    return newTask({
      id,
      owner,
      messageId,
      queueAt: T0 + i,
      queueCap: 100,
      events: [...newTask({ messageId }).events.slice(0, 1), status],
      ...(i === 20 && { maxActive: 2 }),
      ...(i === 25 && { pushConfigs: [webhook] }),
    });
  });
}

/** Creates, one at a time or all in one turn, and reports each answer by position. */
async function run(c: Contract, prefix: string, together: boolean): Promise<Answer[]> {
  // The limited owner holds its limit already.
  for (const messageId of ['held-1', 'held-2']) {
    await c.store.createTask(newTask({ owner: `${prefix}-limited`, messageId }));
  }
  const tasks = scenario(prefix);
  const settled: PromiseSettledResult<Awaited<ReturnType<Contract['store']['createTask']>>>[] = [];
  if (together) settled.push(...(await Promise.allSettled(tasks.map((t) => c.store.createTask(t)))));
  else for (const t of tasks) settled.push((await Promise.allSettled([c.store.createTask(t)]))[0] as never);
  const position = new Map(tasks.map((t, i) => [t.id, i]));
  return settled.map((s) => {
    if (s.status === 'rejected') {
      const e = s.reason as { name?: string; active?: number };
      return { refused: { name: e.name, active: e.active } };
    }
    const { created, result, counts } = s.value;
    return {
      created,
      task: position.get(result.record.id),
      lastSeq: result.record.lastSeq,
      pushConfigs: result.record.pushConfigs,
      counts,
    };
  });
}

/** Creates many at once (the PostgreSQL store sends the creates of one turn as one statement). */
export function concurrentCreateContract(c: Contract): void {
  describe('createTask, many at once', () => {
    it('answers 32 creates of one turn as it answers them one at a time', async () => {
      const alone = await run(c, 'seq', false);
      const together = await run(c, 'par', true);
      expect(together).toEqual(alone);
      // The answers themselves: a duplicate answers the first create of its id, the limited owner's
      // create is refused, the webhook is stored with its task.
      expect(alone[6]).toMatchObject({ created: false, task: 5 });
      expect(alone[12]).toMatchObject({ created: false, task: 10 });
      expect(alone[20]).toEqual({ refused: { name: 'TooManyTasks', active: 2 } });
      expect(alone[25]).toMatchObject({ created: true, task: 25, pushConfigs: 1, lastSeq: 2 });
      expect(alone[31]).toMatchObject({ created: true, counts: { ahead: 27 } });
      for (const prefix of ['seq', 'par']) {
        const page = await c.store.listTasks({ owner: `${prefix}-owner`, now: T0, pageSize: 50 });
        expect(page.totalSize).toBe(28);
        expect((await c.store.findByMessageId(`${prefix}-owner`, `${prefix}-m10`))?.id).toBe(`${prefix}-t10`);
        expect(await c.store.getTask(`${prefix}-t11`, T0)).toBeUndefined();
        expect(await c.store.getTask(`${prefix}-t20`, T0)).toBeUndefined();
        expect((await c.store.readEvents(`${prefix}-t25`, 0, 10)).map((e) => e.seq)).toEqual([1, 2]);
        expect(await c.store.listPushConfigs(`${prefix}-t25`)).toMatchObject([{ id: 'hook' }]);
      }
      // The webhook hears of its task's first events, as a create alone queues them.
      const due = await c.store.claimNotifications(T0, 30_000, 100);
      const heard = (prefix: string) =>
        due.filter((n) => n.taskId === `${prefix}-t25`).map((n) => [n.configId, n.seq]);
      expect(heard('par')).toEqual(heard('seq'));
      expect(heard('seq').length).toBeGreaterThan(0);
    });

    it('fails a create that cannot be stored alone, and makes the others of its turn', async () => {
      const bad = newTask({
        messageId: 'bad',
        events: [{ kind: 'no-such-kind' } as unknown as TaskEvent],
      });
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const unencodable = newTask({
        messageId: 'cyclic',
        events: [{ kind: 'message', message: { ...newTask().events[0], metadata: cyclic } } as never],
      });
      const good = Array.from({ length: 6 }, (_, i) => newTask({ messageId: `good-${i}` }));
      const all = [good[0], bad, ...good.slice(1, 3), unencodable, ...good.slice(3)] as NewTask[];
      const settled = await Promise.allSettled(all.map((t) => c.store.createTask(t)));
      expect(settled.map((s) => s.status)).toEqual([
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
        'fulfilled',
      ]);
      for (const t of good) expect((await c.store.getTask(t.id, T0))?.lastSeq).toBe(2);
      for (const t of [bad, unencodable]) {
        expect(await c.store.getTask(t.id, T0)).toBeUndefined();
        expect(await c.store.findByMessageId('alice', t.messageId)).toBeUndefined();
      }
    });

    it('lets no more than maxActive of 32 creates of one owner through at once', async () => {
      const tasks = Array.from({ length: 32 }, () => newTask({ owner: 'dave', maxActive: 5 }));
      const settled = await Promise.allSettled(tasks.map((t) => c.store.createTask(t)));
      expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(5);
      for (const s of settled) {
        if (s.status === 'rejected') expect(s.reason).toMatchObject({ name: 'TooManyTasks', active: 5 });
      }
      expect((await c.store.listTasks({ owner: 'dave', now: T0, pageSize: 50 })).totalSize).toBe(5);
    });

    it("counts each create's standing of one turn up to its cap, the turn's earlier creates included", async () => {
      for (let i = 0; i < 5; i++) await c.create({ owner: 'erin', queueAt: T0 + 2 * i });
      const turn = (cap: number, from: number, step = 1) =>
        Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            c.store.createTask(newTask({ owner: 'erin', queueAt: T0 + from + step * i, queueCap: cap })),
          ),
        );
      expect((await turn(3, 10)).map((x) => x.counts?.ahead)).toEqual([3, 3, 3, 3]);
      expect((await turn(12, 20)).map((x) => x.counts?.ahead)).toEqual([9, 10, 11, 12]);
      // Between the tasks already queued: T0 + 1, 3, 5, 7 among T0 + 0, 2, 4, 6, 8.
      expect((await turn(6, 1, 2)).map((x) => x.counts?.ahead)).toEqual([1, 3, 5, 6]);
    });

    it('makes every create of a turn larger than one statement should hold', async () => {
      const big = 'x'.repeat(1 << 20);
      const tasks = Array.from({ length: 7 }, (_, i) => newTask({ input: { big, i } }));
      const made = await Promise.all(tasks.map((t) => c.store.createTask(t)));
      expect(made.map((m) => m.created)).toEqual(Array(7).fill(true));
      for (const [i, t] of tasks.entries()) {
        expect((await c.store.getTask(t.id, T0))?.input).toEqual({ big, i });
      }
    });

    it('makes a new task for a messageId whose task expired, in a turn with others', async () => {
      const old = await c.create({ messageId: 'again', expiresAt: T0 + 10 });
      const later = T0 + 20;
      const [again, other] = await Promise.all([
        c.store.createTask(newTask({ messageId: 'again', createdAt: later, expiresAt: later + 1000 })),
        c.store.createTask(newTask({ messageId: 'other', createdAt: later, expiresAt: later + 1000 })),
      ]);
      expect(again.created).toBe(true);
      expect(again.result.record.id).not.toBe(old.id);
      expect(other.created).toBe(true);
      expect((await c.store.findByMessageId('alice', 'again'))?.id).toBe(again.result.record.id);
    });
  });
}
