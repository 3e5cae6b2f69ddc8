/** A worker's claim: which skills, how many tasks, how long it may wait. */
export interface ClaimRequest {
  /** The skills to claim (already checked: remote ones this worker may work), never empty. */
  skills: readonly string[];
  max: number;
  waitMs: number;
  /** Aborted when the worker goes away (its request closed): the claim ends with nothing. */
  signal?: AbortSignal;
  /** Whose claim it is (the worker's credential): each may have at most `maxWaiting` waiting. */
  holder: string;
}

/** The holder already has as many claims waiting as it may: this one was not taken. */
export class TooManyClaims extends Error {
  override readonly name = 'TooManyClaims';
  constructor(readonly max: number) {
    super(
      `This credential already has ${max} claims waiting (MAX_WAITING_CLAIMS): let one end, or claim more tasks per claim (max) instead of more claims`,
    );
  }
}

interface Waiter<R, J> {
  request: R;
  settle: (jobs: J[]) => void;
  settled: boolean;
}

/**
 * The long polls of workers: a claim that finds nothing waits, at the cost of a promise and a
 * timer, until a task may have become claimable (`wake`: a task queued here or on another instance,
 * or the periodic look for expired leases and due retries). A wake-up tries the waiting claims in
 * arrival order, at most one store claim per distinct skill set that found nothing: 200 idle
 * workers of one skill cost one claim per wake-up, not 200.
 *
 * @example
 *   const desk = new ClaimDesk((r) => runs.take(r), (jobs) => runs.giveBack(jobs), { pollMs: 1000, maxWaiting: 1000 });
 *   journal.onQueued(() => desk.wake());
 *   const jobs = await desk.claim({ skills: ['resize'], max: 1, waitMs: 30_000, signal });
 */
export class ClaimDesk<R extends ClaimRequest, J> {
  readonly #take: (request: R) => Promise<J[]>;
  /** Jobs claimed for a waiter that left meanwhile: their leases are given back. */
  readonly #giveBack: (jobs: J[]) => Promise<void>;
  readonly #pollMs: number;
  readonly #maxWaiting: number;
  readonly #waiting = new Set<Waiter<R, J>>();
  /** Waiting claims per holder. */
  readonly #held = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #dispatching: Promise<void> | undefined;
  #again = false;
  #closed = false;

  constructor(
    take: (r: R) => Promise<J[]>,
    giveBack: (jobs: J[]) => Promise<void>,
    o: { pollMs: number; maxWaiting: number },
  ) {
    this.#take = take;
    this.#giveBack = giveBack;
    this.#pollMs = o.pollMs;
    this.#maxWaiting = o.maxWaiting;
  }

  /** Claims waiting now, per skill they wait for (a gauge for metrics). */
  waitingBySkill(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const w of this.#waiting)
      for (const skill of w.request.skills) counts.set(skill, (counts.get(skill) ?? 0) + 1);
    return counts;
  }

  /** What a claim gets: tasks at once if any are claimable, else the first within `waitMs`, else none. */
  async claim(request: R): Promise<J[]> {
    if (this.#closed) return [];
    // Refused before the store is read: a flood of claims costs a map lookup each.
    const held = this.#held.get(request.holder) ?? 0;
    if (request.waitMs > 0 && held >= this.#maxWaiting) throw new TooManyClaims(this.#maxWaiting);
    const now = await this.#take(request);
    if (now.length > 0 || request.waitMs <= 0 || request.signal?.aborted) {
      if (request.signal?.aborted && now.length > 0) await this.#giveBack(now);
      return request.signal?.aborted ? [] : now;
    }
    return new Promise<J[]>((resolve) => {
      const timeout = setTimeout(() => settle([]), request.waitMs);
      const onAbort = () => settle([]);
      const waiter: Waiter<R, J> = { request, settle: (jobs) => settle(jobs), settled: false };
      const settle = (jobs: J[]) => {
        if (waiter.settled) return;
        waiter.settled = true;
        clearTimeout(timeout);
        request.signal?.removeEventListener('abort', onAbort);
        this.#waiting.delete(waiter);
        const left = (this.#held.get(request.holder) ?? 1) - 1;
        if (left > 0) this.#held.set(request.holder, left);
        else this.#held.delete(request.holder);
        if (this.#waiting.size === 0) this.#stopTimer();
        resolve(jobs);
      };
      request.signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.add(waiter);
      this.#held.set(request.holder, (this.#held.get(request.holder) ?? 0) + 1);
      this.#startTimer();
    });
  }

  /** Something may be claimable now: try the waiting claims (calls during a pass make one more). */
  wake(): void {
    if (this.#waiting.size === 0 || this.#closed) return;
    if (this.#dispatching) {
      this.#again = true;
      return;
    }
    this.#dispatching = this.#dispatch()
      .catch(() => {}) // a failed claim leaves its waiter waiting: the next wake-up tries again
      .finally(() => {
        this.#dispatching = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** Ends every waiting claim with nothing (shutdown); later claims get nothing at once. */
  close(): void {
    this.#closed = true;
    for (const waiter of [...this.#waiting]) waiter.settle([]);
    this.#stopTimer();
  }

  async #dispatch(): Promise<void> {
    const dry = new Set<string>();
    for (const waiter of [...this.#waiting]) {
      const key = waiter.request.skills.join('\n');
      if (waiter.settled || dry.has(key)) continue;
      const jobs = await this.#take(waiter.request);
      if (jobs.length === 0) {
        dry.add(key);
        continue;
      }
      if (waiter.settled)
        await this.#giveBack(jobs); // it timed out or left while claiming
      else waiter.settle(jobs);
    }
  }

  #startTimer(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.wake(), this.#pollMs);
    this.#timer.unref();
  }

  #stopTimer(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
