import { describe, expect, it } from 'vitest';
import { QueueCountsCache } from '../src/engine/queue-counts.js';

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

  it('holds at most 10,000 tasks: the one set longest ago goes first', () => {
    const cache = new QueueCountsCache();
    for (let i = 0; i < 10_000; i++) cache.set(`t${i}`, 'v', counts(i), 0);
    cache.set('t0', 'v', counts(0), 0); // set again: now the newest
    cache.set('extra', 'v', counts(1), 0);
    expect(cache.get('t0', 'v', 0)).toEqual(counts(0));
    expect(cache.get('t1', 'v', 0)).toBeUndefined();
    expect(cache.get('extra', 'v', 0)).toEqual(counts(1));
  });
});
