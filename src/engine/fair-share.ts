/**
 * Which queued tasks the next free runner slots go to. The rule (docs/scheduling.md):
 *
 * 1. A slot goes to the tenant with the fewest running tasks, and within it to the principal
 *    (owner) with the fewest; ties go to the owner whose next task was created first.
 * 2. Within one owner, tasks run in queue order: `queueAt` (the creation time, moved earlier by the
 *    task's priority), so a priority only reorders its own owner's queue.
 * 3. A task runs only while its skill, its tenant and the whole store are under their limits of
 *    running tasks; an owner whose next task's skill is full offers its next task of another skill.
 *
 * "Fewest running" (rather than round-robin) needs no state besides the running tasks themselves,
 * so it holds across restarts and across instances sharing a store, and an owner that has waited
 * always has fewer running than one being served: nobody waits for more than the tasks already
 * running to end (no starvation between owners; within one owner, see `queueAt`).
 */

/** Most tasks that may run at once, cluster-wide; `undefined` or absent: no limit. */
export interface ClaimPolicy {
  /** Per skill id (a skill's `concurrency`). */
  skillLimits?: Readonly<Record<string, number>>;
  /** Per tenant (TENANT_MAX_RUNNING). */
  tenantLimit?: number;
  /** All tasks of the store (MAX_RUNNING). */
  globalLimit?: number;
}

/** A queued task that could be claimed, as the picker needs it. */
export interface QueuedTask {
  id: string;
  owner: string;
  tenant: string;
  skill: string;
  createdAt: number;
}

/** Tasks running now (state `working`), counted by tenant, owner and skill. */
export interface RunningCount {
  tenant: string;
  owner: string;
  skill: string;
  n: number;
}

class Counter {
  readonly #n = new Map<string, number>();
  get(key: string): number {
    return this.#n.get(key) ?? 0;
  }
  add(key: string, by = 1): void {
    this.#n.set(key, this.get(key) + by);
  }
}

/**
 * Picks up to `slots` of `queued` (each owner's tasks in its queue order, owners in any order),
 * given what runs now, in the order they should start.
 *
 * @example
 *   pickFair(queued, running, { tenantLimit: 4 }, 16).map((t) => t.id)
 */
export function pickFair<T extends QueuedTask>(
  queued: readonly T[],
  running: readonly RunningCount[],
  policy: ClaimPolicy,
  slots: number,
): T[] {
  const byTenant = new Counter();
  const byOwner = new Counter();
  const bySkill = new Counter();
  let total = 0;
  for (const r of running) {
    byTenant.add(r.tenant, r.n);
    byOwner.add(r.owner, r.n);
    bySkill.add(r.skill, r.n);
    total += r.n;
  }
  const queues = new Map<string, T[]>();
  for (const t of queued) {
    const q = queues.get(t.owner);
    if (q) q.push(t);
    else queues.set(t.owner, [t]);
  }
  const skillFull = (skill: string) => {
    const max = policy.skillLimits?.[skill];
    return max !== undefined && bySkill.get(skill) >= max;
  };
  const tenantFull = (tenant: string) =>
    policy.tenantLimit !== undefined && byTenant.get(tenant) >= policy.tenantLimit;

  const picked: T[] = [];
  while (picked.length < slots && (policy.globalLimit === undefined || total < policy.globalLimit)) {
    let best: { owner: string; index: number; task: T } | undefined;
    for (const [owner, q] of queues) {
      const index = q.findIndex((t) => !skillFull(t.skill));
      const task = q[index];
      if (!task || tenantFull(task.tenant)) continue;
      if (!best || before(task, best.task)) best = { owner, index, task };
    }
    if (!best) break;
    const { task } = best;
    picked.push(task);
    queues.get(best.owner)?.splice(best.index, 1);
    byTenant.add(task.tenant);
    byOwner.add(task.owner);
    bySkill.add(task.skill);
    total++;
  }
  return picked;

  function before(a: T, b: T): boolean {
    const tenants = byTenant.get(a.tenant) - byTenant.get(b.tenant);
    if (tenants !== 0) return tenants < 0;
    const owners = byOwner.get(a.owner) - byOwner.get(b.owner);
    if (owners !== 0) return owners < 0;
    return a.createdAt < b.createdAt;
  }
}
