import type { QueueCounts } from '../../engine/store-port.js';

/** A queued task's counts as statements.ts reads them: ahead, and running as [tenant, skill, all]. */
export interface CountsRow {
  ahead: number | null;
  running: number[] | null;
}

export const toQueueCounts = (r: CountsRow): QueueCounts => {
  const [tenantRunning = 0, skillRunning = 0, running = 0] = r.running ?? [];
  return { ahead: r.ahead ?? 0, tenantRunning, skillRunning, running };
};
