import { describe, expect, it } from 'vitest';
import {
  COUNTS_KEPT,
  FULL_QUEUES_KEPT,
  FullQueues,
  QueueCountsCache,
} from '../../src/engine/queue-counts.js';

const counts = (ahead: number) => ({ ahead, tenantRunning: 0, skillRunning: 0, running: 0 });

describe('QueueCountsCache', () => {
  it('keeps counts for a second, for the task version they were counted at', () => {
    const cache = new QueueCountsCache();
    cache.set('t1', '3:100', counts(7), 1_000);
    expect(cache.get('t1', '3:100', 1_999)).toEqual(counts(7));
    expect(cache.has('t1', 1_999)).toBe(true);
    // A second later, or once the task itself changed, they are counted again.
    expect(cache.get('t1', '3:100', 2_000)).toBeUndefined();
    expect(cache.has('t1', 2_000)).toBe(false);
    expect(cache.get('t1', '4:120', 1_500)).toBeUndefined();
    expect(cache.get('t2', '3:100', 1_500)).toBeUndefined();
  });

  it('holds at most 10,000 tasks: past them, the tenth set longest ago goes', () => {
    const cache = new QueueCountsCache();
    for (let i = 0; i < COUNTS_KEPT; i++) cache.set(`t${i}`, 'v', counts(i), 0);
    cache.set('t0', 'v', counts(0), 0); // set again: now the newest
    expect(cache.size).toBe(COUNTS_KEPT);
    cache.set('extra', 'v', counts(1), 0);
    expect(cache.size).toBe(COUNTS_KEPT - COUNTS_KEPT / 10 + 1);
    for (const gone of ['t1', 't500', `t${COUNTS_KEPT / 10}`])
      expect(cache.get(gone, 'v', 0)).toBeUndefined();
    expect(cache.get(`t${COUNTS_KEPT / 10 + 1}`, 'v', 0)).toEqual(counts(COUNTS_KEPT / 10 + 1));
    expect(cache.get('t0', 'v', 0)).toEqual(counts(0));
    expect(cache.get('extra', 'v', 0)).toEqual(counts(1));
  });

  // Every create keeps its new task's counts: a flood of them must not grow the cache without end.
  it('a flood of creates, each keeping its counts, never holds more than 10,000 tasks', () => {
    const cache = new QueueCountsCache();
    let most = 0;
    for (let i = 0; i < 10 * COUNTS_KEPT; i++) {
      cache.set(`new-${i}`, '2:1000', counts(i % 250), 1_000 + i);
      most = Math.max(most, cache.size);
    }
    expect(most).toBe(COUNTS_KEPT);
    // The newest are kept, for a poll right after the create.
    const last = 10 * COUNTS_KEPT - 1;
    expect(cache.get(`new-${last}`, '2:1000', 1_000 + last)).toEqual(counts(last % 250));
  });
});

describe('FullQueues', () => {
  it('knows the counts behind a queue counted full for a second, for tasks placed after it', () => {
    const full = new FullQueues(250);
    full.counted('alice', 'export', 5_000, counts(249), 1_000);
    expect(full.countsAt('alice', 'export', 6_000, 1_000)).toBeUndefined(); // not full: nothing known
    full.counted('alice', 'export', 5_000, counts(250), 1_000);
    expect(full.countsAt('alice', 'export', 5_001, 1_999)).toEqual(counts(250));
    // At the same place the ids order them; before it, another skill's or owner's queue, or a second later: unknown.
    for (const [owner, skill, at, now] of [
      ['alice', 'export', 5_000, 1_500],
      ['alice', 'export', 4_999, 1_500],
      ['alice', 'sleep', 6_000, 1_500],
      ['bob', 'export', 6_000, 1_500],
      ['alice', 'export', 6_000, 2_000],
    ] as const)
      expect(full.countsAt(owner, skill, at, now)).toBeUndefined();
  });

  it(`remembers at most ${FULL_QUEUES_KEPT} queues`, () => {
    const full = new FullQueues(250);
    for (let i = 0; i <= FULL_QUEUES_KEPT; i++) full.counted(`owner-${i}`, 'export', 0, counts(250), 0);
    expect(full.countsAt('owner-0', 'export', 1, 0)).toBeUndefined();
    expect(full.countsAt(`owner-${FULL_QUEUES_KEPT}`, 'export', 1, 0)).toEqual(counts(250));
  });
});
