import { describe, expect, it } from 'vitest';
import { operatorsOf } from '../../src/auth/operators.js';
import { summarize } from '../../src/engine/activity.js';
import { grantOperator } from '../../src/engine/operator.js';
import type { ActivityTask } from '../../src/engine/operator-port.js';

const MINUTE = 60_000;
/** A clock on a minute's edge, plus 30 s: the window's minutes are whole but the last. */
const NOW = 1_700_000_040_000 + 30_000;
const minuteOf = (at: number) => Math.floor(at / MINUTE);

describe('operator grants', () => {
  it('are made for a name OPERATORS holds, the first one matching, and for no other', () => {
    const operators = operatorsOf(' ops/root , key:ops/other,jwt:ops/bob, role:oncall ');
    expect([...operators]).toEqual(['ops/root', 'ops/other', 'jwt:ops/bob', 'role:oncall']);
    expect(grantOperator(operators, ['acme/alice', 'role:oncall'])?.operator).toBe('role:oncall');
    expect(grantOperator(operators, ['ops/bob'])).toBeUndefined(); // the API key's bob, not the token's
    expect(grantOperator(operators, [])).toBeUndefined();
    expect(grantOperator(new Set(), ['ops/root'])).toBeUndefined();
  });
});

describe('the charts’ series (summarize)', () => {
  const task = (t: Partial<ActivityTask> & Pick<ActivityTask, 'state'>): ActivityTask => ({
    createdAt: NOW - 10 * MINUTE,
    updatedAt: NOW - 5 * MINUTE,
    ...t,
  });

  it('has one value per minute of the window, ending with the current minute', () => {
    const s = summarize({ tasks: [], attempts: [] }, NOW, 60 * MINUTE);
    expect(s.minutes).toHaveLength(60);
    expect(s.minutes.at(-1)).toBe(((minuteOf(NOW) + 1) * MINUTE) / 1000);
    expect(s.queued.every((q) => q === 0)).toBe(true);
    expect(s.duration.p50.every((v) => v === null)).toBe(true);
    expect(s.push.successRate.every((v) => v === null)).toBe(true);
    expect(s.partial).toBe(false);
  });

  it('counts finished tasks by outcome in the minute they ended, with run-time percentiles', () => {
    const end = NOW - 2 * MINUTE;
    const tasks = [
      ...Array.from({ length: 10 }, (_, i) =>
        task({ state: 'completed', startedAt: end - (i + 1) * 1000, updatedAt: end }),
      ),
      task({ state: 'failed', startedAt: end - 500, updatedAt: end }),
      task({ state: 'canceled', updatedAt: end }), // never started: from its creation
    ];
    const s = summarize({ tasks, attempts: [] }, NOW, 60 * MINUTE);
    const i = s.minutes.indexOf(((minuteOf(end) + 1) * MINUTE) / 1000);
    expect(s.finished.completed[i]).toBe(10);
    expect(s.finished.failed[i]).toBe(1);
    expect(s.finished.canceled[i]).toBe(1);
    expect(s.finished.completed.reduce((a, b) => a + b)).toBe(10);
    // Run times: 500, 1000..10000 and the canceled one's 8 minutes (480000).
    expect(s.duration.p50[i]).toBe(5000);
    expect(s.duration.p90[i]).toBe(10_000);
    expect(s.duration.p99[i]).toBe(480_000);
  });

  it('counts a task as queued at the end of each minute from its creation until a runner took it', () => {
    const created = NOW - 10 * MINUTE;
    const tasks = [
      task({
        state: 'completed',
        createdAt: created,
        startedAt: created + 3 * MINUTE,
        updatedAt: NOW - MINUTE,
      }),
      task({ state: 'submitted', createdAt: created, updatedAt: created }), // still queued
      task({ state: 'canceled', createdAt: created, updatedAt: created + 2 * MINUTE }), // canceled in the queue
    ];
    const s = summarize({ tasks, attempts: [] }, NOW, 60 * MINUTE);
    const at = (ms: number) => s.queued[s.minutes.indexOf(((minuteOf(ms) + 1) * MINUTE) / 1000)];
    expect(at(created - MINUTE)).toBe(0);
    expect(at(created)).toBe(3);
    expect(at(created + 2 * MINUTE)).toBe(2); // the canceled one left
    expect(at(created + 3 * MINUTE)).toBe(1); // the first was taken
    expect(s.queued.at(-1)).toBe(1);
  });

  it('gives webhook success per minute from the attempts, and leaves out minutes outside the window', () => {
    const m = minuteOf(NOW) - 3;
    const s = summarize(
      {
        tasks: [],
        attempts: [
          { minute: m, outcome: 'delivered', count: 3 },
          { minute: m, outcome: 'retry', count: 1 },
          { minute: m - 500, outcome: 'dead', count: 9 },
        ],
      },
      NOW,
      60 * MINUTE,
    );
    const i = s.minutes.indexOf(((m + 1) * MINUTE) / 1000);
    expect([s.push.delivered[i], s.push.failed[i], s.push.successRate[i]]).toEqual([3, 1, 75]);
    expect(s.push.failed.reduce((a, b) => a + b)).toBe(1);
  });
});
