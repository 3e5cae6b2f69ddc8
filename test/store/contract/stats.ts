import { describe, expect, it } from 'vitest';
import { type Contract, newTask, T0 } from './context.js';

/** What the metrics read of the store: tasks by active state and the outbox, counted now. */
export function statsContract(c: Contract): void {
  describe('stats', () => {
    it('counts tasks by state as they are queued, claimed, parked and finished', async () => {
      expect((await c.store.stats()).tasks).toEqual({ submitted: 0, working: 0, 'input-required': 0 });
      for (let i = 0; i < 3; i++) await c.create();
      expect((await c.store.stats()).tasks).toEqual({ submitted: 3, working: 0, 'input-required': 0 });
      const claimed = await c.store.claim('w1', T0 + 10, 60_000, 2);
      expect(claimed).toHaveLength(2);
      const [first, second] = claimed;
      if (!first || !second) throw new Error('two claims expected');
      await c.write(first.record.id, {
        from: ['working'],
        to: 'input-required',
        leaseToken: first.leaseToken,
        releaseLease: true,
        events: [{ kind: 'status', state: 'input-required' }],
      });
      await c.write(second.record.id, {
        from: ['working'],
        to: 'completed',
        leaseToken: second.leaseToken,
        releaseLease: true,
        events: [{ kind: 'status', state: 'completed' }],
      });
      expect((await c.store.stats()).tasks).toEqual({ submitted: 1, working: 0, 'input-required': 1 });
    });

    it('counts the notifications still to deliver and dates the oldest; delivered ones leave it', async () => {
      expect((await c.store.stats()).outbox).toEqual({ depth: 0 });
      const config = (taskId: string) => ({
        taskId,
        id: 'hook',
        url: 'https://hooks.example/a',
        allEvents: true,
        format: 'a2a/1.0',
        createdAt: T0,
      });
      const id = 'stats-task';
      await c.store.createTask({ ...newTask({ id }), pushConfigs: [config(id)] });
      await c.write(id, { events: [{ kind: 'progress', progress: { percent: 1 } }], at: T0 + 50 });
      const { outbox } = await c.store.stats();
      expect(outbox.depth).toBeGreaterThanOrEqual(1);
      expect(outbox.oldestAt).toBe(T0);
      for (;;) {
        const due = await c.store.claimNotifications(T0 + 100_000, 1000, 100);
        if (due.length === 0) break;
        for (const n of due) await c.store.settleNotification(n, { kind: 'delivered' });
      }
      expect((await c.store.stats()).outbox).toEqual({ depth: 0 });
    });
  });
}
