import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TaskStore } from '../../src/engine/store-port.js';
import { blobContract } from './contract/blobs.js';
import { concurrentCreateContract } from './contract/concurrent-creates.js';
import { contract } from './contract/context.js';
import { fairnessContract } from './contract/fairness.js';
import { generationContract } from './contract/generations.js';
import { leaseContract } from './contract/leases.js';
import { operatorContract } from './contract/operator.js';
import { pushContract } from './contract/push.js';
import { readContract } from './contract/reads.js';
import { standingContract } from './contract/standing.js';
import { statsContract } from './contract/stats.js';
import { writeContract } from './contract/writes.js';

/**
 * The behaviour every {@link TaskStore} adapter must show. It uses only what src/engine/store-port.ts
 * promises and passes every time explicitly (no clock), so a new adapter runs it unchanged:
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

    const c = contract(() => store);
    writeContract(c);
    generationContract(c);
    concurrentCreateContract(c);
    readContract(c);
    leaseContract(c);
    fairnessContract(c);
    standingContract(c);
    pushContract(c);
    blobContract(c);
    statsContract(c);
    operatorContract(c);

    it('ping resolves', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('close is idempotent', async () => {
      await store.close();
      await expect(store.close()).resolves.toBeUndefined();
    });
  });
}
