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
 * stream does, and is refused past the bound before it waits. Another owner's task is not found,
 * as GetTask answers it.
 */
export async function awaitGeneration(
  core: EngineContext,
  owner: string,
  id: string,
  after: number,
  waitMs: number,
  signal?: AbortSignal,
): Promise<number> {
  const { hub, store, now } = core.journal;
  const current = async (): Promise<number> => {
    const stamp = await store.getTaskStamp(id, now());
    if (!stamp || stamp.owner !== owner) throw notFound(id);
    return stamp.lastSeq;
  };
  const first = await current();
  if (first > after || waitMs <= 0) return first;
  const giveBack = core.streams.take(owner);
  const deadline = AbortSignal.timeout(Math.min(waitMs, MAX_POLL_WAIT_MS));
  const stop = signal ? AbortSignal.any([deadline, signal]) : deadline;
  // Subscribed before the store is read again: a write between the two reads still wakes it.
  const wait = waitForEvents(hub, id, stop);
  try {
    wait.takeAfter(first); // the first take asks for a store read: that is the one below
    let seen = await current();
    while (seen <= after && !stop.aborted) {
      await wait.next();
      // Entries this instance wrote come with the wake-up; another instance's (or a gap) are read.
      const heard = wait.takeAfter(seen);
      if (heard === undefined || stop.aborted) seen = await current();
      else if (heard.length > 0) seen = heard[heard.length - 1]?.seq ?? seen;
    }
    return seen;
  } finally {
    wait.close();
    giveBack();
  }
}
