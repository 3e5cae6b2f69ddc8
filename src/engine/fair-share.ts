/**
 * Which queued tasks the next free runner slots go to. The rule (docs/scheduling.md):
 *
 * 1. A slot goes to the tenant with the fewest running tasks, and within it to the principal
 *    (owner) with the fewest; ties go to the one served least recently (its last slot is oldest:
 *    round-robin among equals), then to the owner whose next task was created first.
 * 2. Within one owner, tasks run in queue order: `queueAt` (the creation time, moved earlier by the
 *    task's priority), so a priority only reorders its own owner's queue.
 * 3. A task runs only while its skill, its tenant and the whole store are under their limits of
 *    running tasks; an owner whose next task's skill is full offers its next task of another skill.
 *
 * "Fewest running" first, rather than round-robin alone: it reads the running tasks themselves, so
 * a tenant whose jobs are long cannot take more slots by taking turns as often as one whose jobs are
 * short, and it holds across restarts and instances. Among equals (one slot, every tenant at zero),
 * the turns decide: a tenant that just got a slot goes after one that waits. So a tenant's next task
 * waits for at most the next free slot, and nobody starves between owners (within one owner, see
 * `queueAt`).
 */

/** Keys of the turns (when each last got a slot) of a tenant and of an owner. */
export const tenantTurn = (tenant: string): string => `t:${tenant}`;
export const ownerTurn = (owner: string): string => `o:${owner}`;

/** The turn keys of these tasks' tenants and owners, each once. */
export const turnKeys = (tasks: readonly QueuedTask[]): string[] => [
  ...new Set(tasks.flatMap((t) => [tenantTurn(t.tenant), ownerTurn(t.owner)])),
];

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
 * given what runs now and when each tenant and owner last got a slot (`turns`, by
 * {@link tenantTurn} and {@link ownerTurn}; absent: never), in the order they should start.
 *
 * @example
 *   pickFair(queued, running, { tenantLimit: 4 }, 16, turns).map((t) => t.id)
 */
export function pickFair<T extends QueuedTask>(
  queued: readonly T[],
  running: readonly RunningCount[],
  policy: ClaimPolicy,
  slots: number,
  turns: ReadonlyMap<string, number> = new Map(),
): T[] {
  // Picks of this batch count as served after every earlier turn, in the order they are made.
  const served = new Map(turns);
  let turn = Math.max(0, ...turns.values());
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
    served.set(tenantTurn(task.tenant), ++turn);
    served.set(ownerTurn(task.owner), turn);
    byTenant.add(task.tenant);
    byOwner.add(task.owner);
    bySkill.add(task.skill);
    total++;
  }
  return picked;

  function before(a: T, b: T): boolean {
    const tenants = byTenant.get(a.tenant) - byTenant.get(b.tenant);
    if (tenants !== 0) return tenants < 0;
    const tenantTurns = lastTurn(tenantTurn(a.tenant)) - lastTurn(tenantTurn(b.tenant));
    if (tenantTurns !== 0) return tenantTurns < 0;
    const owners = byOwner.get(a.owner) - byOwner.get(b.owner);
    if (owners !== 0) return owners < 0;
    const ownerTurns = lastTurn(ownerTurn(a.owner)) - lastTurn(ownerTurn(b.owner));
    if (ownerTurns !== 0) return ownerTurns < 0;
    return a.createdAt < b.createdAt;
  }

  function lastTurn(key: string): number {
    return served.get(key) ?? 0;
  }
}
