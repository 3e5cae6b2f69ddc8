import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ClaimPolicy,
  pickFair,
  type QueuedTask,
  type RunningCount,
} from '../../src/engine/fair-share.js';

const tenants = ['t1', 't2', 't3'];
const owners = tenants.flatMap((t) => [`${t}/a`, `${t}/b`]);
const skills = ['s1', 's2'];

const task = fc.record({
  owner: fc.constantFrom(...owners),
  skill: fc.constantFrom(...skills),
  createdAt: fc.integer({ min: 0, max: 1000 }),
});
const scene = fc.record({
  queued: fc.array(task, { maxLength: 40 }),
  running: fc.array(task, { maxLength: 12 }),
  policy: fc.record(
    {
      skillLimits: fc.record({ s1: fc.integer({ min: 0, max: 6 }) }),
      tenantLimit: fc.integer({ min: 0, max: 8 }),
      globalLimit: fc.integer({ min: 0, max: 20 }),
    },
    { requiredKeys: [] },
  ),
  slots: fc.integer({ min: 0, max: 16 }),
});

const tenantOf = (owner: string) => owner.split('/')[0] as string;
const countBy = (items: readonly { key: string }[]) => {
  const n = new Map<string, number>();
  for (const { key } of items) n.set(key, (n.get(key) ?? 0) + 1);
  return n;
};

describe('pickFair', () => {
  it('never passes a limit, and leaves no slot idle while a task that fits the limits waits', () => {
    fc.assert(
      fc.property(scene, ({ queued: q, running: r, policy: drawn, slots }) => {
        const policy: ClaimPolicy = drawn;
        const queued: QueuedTask[] = q
          .map((t, i) => ({ ...t, id: `q${i}`, tenant: tenantOf(t.owner) }))
          .sort((x, y) => x.createdAt - y.createdAt);
        const running: RunningCount[] = r.map((t) => ({ ...t, tenant: tenantOf(t.owner), n: 1 }));
        const picked = pickFair(queued, running, policy, slots);
        const after = [...running, ...picked];
        expect(picked.length).toBeLessThanOrEqual(slots);
        expect(new Set(picked.map((t) => t.id)).size).toBe(picked.length);
        const bySkill = countBy(after.map((t) => ({ key: t.skill })));
        const byTenant = countBy(after.map((t) => ({ key: t.tenant })));
        const fits = (t: QueuedTask) =>
          (policy.skillLimits?.[t.skill] === undefined ||
            (bySkill.get(t.skill) ?? 0) < (policy.skillLimits[t.skill] as number)) &&
          (policy.tenantLimit === undefined || (byTenant.get(t.tenant) ?? 0) < policy.tenantLimit);
        // Each limit holds unless the running tasks alone already passed it (then nothing was added).
        for (const t of picked) {
          const skillMax = policy.skillLimits?.[t.skill];
          if (skillMax !== undefined) expect(bySkill.get(t.skill)).toBeLessThanOrEqual(skillMax);
          if (policy.tenantLimit !== undefined)
            expect(byTenant.get(t.tenant)).toBeLessThanOrEqual(policy.tenantLimit);
        }
        if (policy.globalLimit !== undefined && picked.length > 0)
          expect(after.length).toBeLessThanOrEqual(policy.globalLimit);
        const full =
          picked.length === slots || (policy.globalLimit !== undefined && after.length >= policy.globalLimit);
        if (!full) {
          const left = queued.filter((t) => !picked.includes(t));
          expect(left.filter(fits)).toEqual([]);
        }
      }),
    );
  });

  it("takes each owner's tasks in its queue order, skipping only those of a full skill", () => {
    fc.assert(
      fc.property(scene, ({ queued: q, slots }) => {
        const queued: QueuedTask[] = q.map((t, i) => ({ ...t, id: `q${i}`, tenant: tenantOf(t.owner) }));
        const picked = pickFair(queued, [], {}, slots);
        for (const owner of owners) {
          const mine = queued.filter((t) => t.owner === owner);
          const taken = picked.filter((t) => t.owner === owner);
          expect(taken).toEqual(mine.slice(0, taken.length));
        }
      }),
    );
  });

  it('gives every tenant a turn before any tenant a second one, when all have work', () => {
    const queued: QueuedTask[] = tenants.flatMap((tenant, i) =>
      Array.from({ length: 5 }, (_, k) => ({
        id: `${tenant}-${k}`,
        owner: `${tenant}/a`,
        tenant,
        skill: 's1',
        createdAt: i * 100 + k,
      })),
    );
    expect(pickFair(queued, [], {}, 4).map((t) => t.id)).toEqual(['t1-0', 't2-0', 't3-0', 't1-1']);
    const busy: RunningCount[] = [{ tenant: 't1', owner: 't1/a', skill: 's1', n: 3 }];
    expect(pickFair(queued, busy, {}, 4).map((t) => t.id)).toEqual(['t2-0', 't3-0', 't2-1', 't3-1']);
  });
});
