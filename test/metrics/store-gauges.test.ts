import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it, vi } from 'vitest';
import { storeGauges } from '../../src/metrics/store-gauges.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { tempDirs } from '../helpers.js';
import { newTask } from '../store/contract/context.js';
import { sampleOf } from './read.js';

const dirs = tempDirs();

describe('store gauges', () => {
  it('read the store once for scrapes that come together, and again once the second has passed', async () => {
    const store = new SqliteStore({ path: join(dirs.make(), 'tasks.db') });
    let now = 1_000_000;
    const registry = new Registry();
    const read = vi.spyOn(store, 'stats');
    const waiting = new Map([['resize', 3]]);
    storeGauges(registry, {
      store,
      activeJobs: () => 2,
      waitingClaims: () => waiting,
      clock: () => now,
      failed: () => {},
    });
    await store.createTask(newTask());
    await Promise.all([registry.metrics(), registry.metrics()]);
    expect(read).toHaveBeenCalledTimes(1);
    expect(await sampleOf(registry, 'taskhandle_tasks', { state: 'submitted', scope: 'cluster' })).toBe(1);
    expect(read).toHaveBeenCalledTimes(1);
    await store.createTask(newTask());
    now += 1000;
    expect(await sampleOf(registry, 'taskhandle_tasks', { state: 'submitted', scope: 'cluster' })).toBe(2);
    expect(read).toHaveBeenCalledTimes(2);
    expect(await sampleOf(registry, 'taskhandle_running_jobs', { scope: 'instance' })).toBe(2);
    expect(
      await sampleOf(registry, 'taskhandle_worker_claims_waiting', { skill: 'resize', scope: 'instance' }),
    ).toBe(3);
    waiting.clear(); // the last idle worker left: no series stays behind
    expect(await registry.metrics()).not.toContain('taskhandle_worker_claims_waiting{');
    expect(await sampleOf(registry, 'taskhandle_sqlite_wal_bytes', { scope: 'instance' })).toBeGreaterThan(0);
    await store.close();
  });

  it('a store that cannot be read drops its gauges from the scrape, which still answers', async () => {
    const store = new SqliteStore({ path: join(dirs.make(), 'tasks.db') });
    let now = 1_000_000;
    const registry = new Registry();
    const failed = vi.fn();
    storeGauges(registry, {
      store,
      activeJobs: () => 0,
      waitingClaims: () => new Map(),
      clock: () => now,
      failed,
    });
    await store.createTask(newTask());
    expect(await registry.metrics()).toContain('taskhandle_tasks{state="submitted",scope="cluster"} 1');
    await store.close();
    now += 1000;
    const text = await registry.metrics();
    expect(text).not.toContain('taskhandle_tasks{');
    expect(text).not.toContain('taskhandle_push_outbox_depth{');
    expect(text).toContain('taskhandle_running_jobs{scope="instance"} 0');
    expect(failed).toHaveBeenCalled();
  });
});
