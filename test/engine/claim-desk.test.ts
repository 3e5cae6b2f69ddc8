import { describe, expect, it } from 'vitest';
import { ClaimDesk, type ClaimRequest } from '../../src/engine/claim-desk.js';

/** A store of claimable jobs per skill, counting the claims made on it. */
function fakeQueue() {
  const queued = new Map<string, number[]>();
  let next = 1;
  const q = {
    takes: 0,
    givenBack: [] as number[],
    add(skill: string, n = 1) {
      for (let i = 0; i < n; i++) queued.set(skill, [...(queued.get(skill) ?? []), next++]);
    },
    async take(r: ClaimRequest): Promise<number[]> {
      q.takes++;
      const got: number[] = [];
      for (const skill of r.skills) {
        const jobs = queued.get(skill) ?? [];
        while (got.length < r.max && jobs.length > 0) got.push(jobs.shift() as number);
      }
      return got;
    },
    async giveBack(jobs: number[]) {
      q.givenBack.push(...jobs);
    },
  };
  return q;
}

const request = (skills: string[], o: Partial<ClaimRequest> = {}): ClaimRequest => ({
  skills,
  max: 1,
  waitMs: 60_000,
  holder: 'api-key:ops/robot',
  ...o,
});
const OPTIONS = { pollMs: 60_000, maxWaiting: 1000 };

describe('ClaimDesk', () => {
  it('answers at once when something is claimable, with nothing at once when asked not to wait', async () => {
    const q = fakeQueue();
    const desk = new ClaimDesk(q.take, q.giveBack, OPTIONS);
    q.add('a', 2);
    expect(await desk.claim(request(['a'], { max: 5 }))).toEqual([1, 2]);
    expect(await desk.claim(request(['a'], { waitMs: 0 }))).toEqual([]);
    desk.close();
  });

  it('200 idle claims of one skill cost one store claim per wake-up, and the first waiter gets the task', async () => {
    const q = fakeQueue();
    const desk = new ClaimDesk(q.take, q.giveBack, OPTIONS);
    const waiting = Array.from({ length: 200 }, () => desk.claim(request(['a'])));
    await Promise.resolve();
    expect(desk.waitingBySkill()).toEqual(new Map([['a', 200]]));
    const before = q.takes;
    desk.wake(); // nothing queued: one dry claim, not 200
    await new Promise((r) => setImmediate(r));
    expect(q.takes - before).toBe(1);
    q.add('a');
    desk.wake();
    expect(await waiting[0]).toEqual([1]);
    expect(q.takes - before).toBe(3); // the first waiter's take, then one dry look for the rest
    expect(desk.waitingBySkill().get('a')).toBe(199);
    desk.close();
    expect(await Promise.all(waiting.slice(1))).toEqual(Array.from({ length: 199 }, () => []));
    expect(desk.waitingBySkill()).toEqual(new Map());
  });

  it('a wake-up tries each distinct skill set that waits', async () => {
    const q = fakeQueue();
    const desk = new ClaimDesk(q.take, q.giveBack, OPTIONS);
    const forA = desk.claim(request(['a']));
    const forB = desk.claim(request(['b']));
    await Promise.resolve();
    q.add('b');
    desk.wake();
    expect(await forB).toEqual([1]);
    q.add('a');
    desk.wake();
    expect(await forA).toEqual([2]);
    desk.close();
  });

  it('a claim that left (its worker hung up) ends with nothing, and jobs claimed for it are given back', async () => {
    const q = fakeQueue();
    let release!: () => void;
    const slow = {
      take: async (r: ClaimRequest) => {
        if (q.takes > 0) await new Promise<void>((resolve) => (release = resolve));
        return q.take(r);
      },
    };
    const desk = new ClaimDesk(slow.take, q.giveBack, OPTIONS);
    const hungUp = new AbortController();
    const waiting = desk.claim(request(['a'], { signal: hungUp.signal }));
    await new Promise((r) => setImmediate(r));
    q.add('a');
    desk.wake(); // the take is in flight when the worker leaves
    await new Promise((r) => setImmediate(r));
    hungUp.abort();
    expect(await waiting).toEqual([]);
    release();
    await new Promise((r) => setImmediate(r));
    expect(q.givenBack).toEqual([1]);
    desk.close();
  });

  it('a holder may have MAX_WAITING_CLAIMS waiting; another holder is not held back by it', async () => {
    const q = fakeQueue();
    const desk = new ClaimDesk(q.take, q.giveBack, { pollMs: 60_000, maxWaiting: 2 });
    const waiting = [desk.claim(request(['a'], { waitMs: 50 })), desk.claim(request(['a'], { waitMs: 50 }))];
    await new Promise((r) => setImmediate(r));
    const takes = q.takes;
    await expect(desk.claim(request(['a']))).rejects.toThrow(
      /already has 2 claims waiting \(MAX_WAITING_CLAIMS\)/,
    );
    expect(q.takes).toBe(takes); // refused before the store is read
    const other = desk.claim(request(['a'], { holder: 'api-key:ops/other', waitMs: 50 }));
    expect(await desk.claim(request(['a'], { waitMs: 0 }))).toEqual([]); // a look without a wait is no long poll
    expect(await Promise.all([...waiting, other])).toEqual([[], [], []]);
    // Once its waits ran out, the holder may wait again.
    const again = desk.claim(request(['a']));
    await new Promise((r) => setImmediate(r));
    expect(desk.waitingBySkill().get('a')).toBe(1);
    desk.close();
    expect(await again).toEqual([]);
  });

  it('a waiting claim ends with nothing when its wait runs out', async () => {
    const q = fakeQueue();
    const desk = new ClaimDesk(q.take, q.giveBack, OPTIONS);
    expect(await desk.claim(request(['a'], { waitMs: 20 }))).toEqual([]);
    expect(desk.waitingBySkill()).toEqual(new Map());
  });
});
