import type { RunningCount } from '../engine/fair-share.js';
import type { QueueCounts } from '../engine/store-port.js';
import type { TaskRecord } from '../engine/task.js';

/**
 * The counts of a list page's queued tasks (ListPage.queued), from two reads made once for the
 * whole page: the head of the owner's queue (`head`: the ids of its first `cap` queued tasks, in
 * queue order) and the running tasks by tenant and skill. A task's place in the head is the number
 * of its owner's tasks ahead of it; one past the head has at least `cap` ahead, as `queueCounts`
 * counts it. Both reads must be of the snapshot the page was read in.
 */
export function pageStanding(
  records: readonly TaskRecord[],
  head: readonly string[],
  running: readonly Pick<RunningCount, 'tenant' | 'skill' | 'n'>[],
): Map<string, QueueCounts> {
  const place = new Map(head.map((id, i) => [id, i]));
  let all = 0;
  for (const r of running) all += r.n;
  const counts = new Map<string, QueueCounts>();
  for (const record of records) {
    if (record.state !== 'submitted') continue;
    let tenantRunning = 0;
    let skillRunning = 0;
    for (const r of running) {
      if (r.tenant === record.tenant) tenantRunning += r.n;
      if (r.skill === record.skill) skillRunning += r.n;
    }
    counts.set(record.id, {
      ahead: place.get(record.id) ?? head.length,
      tenantRunning,
      skillRunning,
      running: all,
    });
  }
  return counts;
}
