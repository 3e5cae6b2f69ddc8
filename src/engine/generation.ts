import { setMaxListeners } from 'node:events';
import { type EngineContext, notFound } from './context.js';
import { EngineError } from './errors.js';
import { waitForEvents } from './wait.js';

/**
 * A task's generation (A2A 1.1 draft, section 3.2.7) is its event log's sequence: `lastSeq`, the
 * number of entries its log holds. It grows by one with every entry (status, artifact, progress,
 * message) and never otherwise, so a caller that saw generation N knows exactly what it has seen.
 */

/** The longest a long-poll GetTask waits (the caller may ask for less). */
export const MAX_POLL_WAIT_MS = 30_000;

/** The refusal of a conditional command whose generation is stale; nothing was written. */
export function generationMismatch(
  taskId: string,
  expected: number,
  current: number,
  showCurrent = true,
): EngineError {
  const now = showCurrent ? ` but current generation is ${current}` : '';
  return new EngineError(
    'task-generation-mismatch',
    `Task generation mismatch: expected ${expected}${now}; the task changed since you read it: read it again and decide with what it holds now`,
    showCurrent
      ? { taskId, expectedGeneration: String(expected), currentGeneration: String(current) }
      : { taskId, expectedGeneration: String(expected) },
  );
}

/**
 * Waits until the caller's task has a generation past `after`, or `waitMs` passes, or `signal`
 * aborts; returns the generation it then has (the caller reads the task as usual). Answers at once
 * when the task is already past it. The wait is the stream's: a subscription to the task's
 * wake-ups (the event hub, fed from other instances by the store's change feed), no timer per
 * read. A waiting poll holds one of the caller's stream slots (MAX_STREAMS): it costs what an open
 * stream does (perf/long-poll-heap.ts), and is refused past the bound before it waits. Another
 * owner's task is not found, as GetTask answers it.
 */
export async function awaitGeneration(
  core: EngineContext,
  owner: string,
  id: string,
  after: number,
  waitMs: number,
  signal: AbortSignal = NEVER,
): Promise<number> {
  const first = await generationNow(core, owner, id);
  if (first > after || waitMs <= 0 || signal.aborted) return first;
  const giveBack = core.streams.take(owner);
  // Subscribed before the store is read again: a write between the two reads still wakes it.
  const wait = waitForEvents(core.journal.hub, id, signal);
  const slot = DEADLINES.add(Math.min(waitMs, MAX_POLL_WAIT_MS), wait);
  try {
    wait.takeAfter(first); // the first take asks for a store read: that is the one below
    let seen = await generationNow(core, owner, id);
    while (seen <= after && !signal.aborted && !DEADLINES.passed(slot)) {
      await wait.next();
      // Entries this instance wrote come with the wake-up; another instance's (or a gap) are read.
      const heard = wait.takeAfter(seen);
      if (heard === undefined) seen = await generationNow(core, owner, id);
      else if (heard.length > 0) seen = heard[heard.length - 1]?.seq ?? seen;
    }
    return seen;
  } finally {
    DEADLINES.remove(slot, wait);
    wait.close();
    giveBack();
  }
}

/** The caller's task's generation, read without its log; another owner's task is not found. */
async function generationNow(core: EngineContext, owner: string, id: string): Promise<number> {
  const stamp = await core.journal.store.getTaskStamp(id, core.journal.now());
  if (!stamp || stamp.owner !== owner) throw notFound(id);
  return stamp.lastSeq;
}

/** The signal of a wait nobody ends early: every such wait listens to it (and leaves at its end). */
const NEVER = new AbortController().signal;
setMaxListeners(0, NEVER);

/** How finely the deadlines of waiting polls are kept: a wait ends at most this much late. */
const GRAIN_MS = 50;

/**
 * The deadlines of every waiting poll, grouped per {@link GRAIN_MS}: one timer per group, not one
 * (with its controller and listeners) per poll. A poll's entry is one Set member.
 */
class Deadlines {
  readonly #groups = new Map<number, Set<{ wake(): void }>>();

  /** Wakes `waiter` in `ms` (up to GRAIN_MS later); returns its group, for {@link passed} and {@link remove}. */
  add(ms: number, waiter: { wake(): void }): number {
    // The monotonic clock: a wall clock set back must not stretch a wait.
    const slot = Math.ceil((performance.now() + ms) / GRAIN_MS) * GRAIN_MS;
    let group = this.#groups.get(slot);
    if (!group) {
      group = new Set();
      this.#groups.set(slot, group);
      // Unref'd: a waiting poll does not keep the process alive (shutdown aborts it anyway).
      setTimeout(fire, Math.max(0, slot - performance.now()), this.#groups, slot).unref();
    }
    group.add(waiter);
    return slot;
  }

  /** Whether the group's timer fired: its waits are over (a group lives until then). */
  passed(slot: number): boolean {
    return !this.#groups.has(slot);
  }

  remove(slot: number, waiter: { wake(): void }): void {
    this.#groups.get(slot)?.delete(waiter);
  }
}

function fire(groups: Map<number, Set<{ wake(): void }>>, slot: number): void {
  const group = groups.get(slot);
  groups.delete(slot);
  for (const waiter of group ?? []) waiter.wake();
}

const DEADLINES = new Deadlines();
