import type { QueueCounts } from './store-port.js';

/** A queued task's counts are read again after this long at most (see {@link QueueCountsCache}). */
const COUNTS_FRESH_MS = 1_000;
/** Tasks whose counts are kept at most; past it the oldest tenth goes (see `set`). */
export const COUNTS_KEPT = 10_000;
/** Owners (by skill) whose full queue is remembered at most (see {@link FullQueues}). */
export const FULL_QUEUES_KEPT = 1_000;

/**
 * Entries kept for COUNTS_FRESH_MS, at most `max`: past it the oldest tenth goes in one pass. One at
 * a time cost each set 7 µs, not 0.35 (measured, Node 20): a Map's deleted entries stay until it is
 * rebuilt, and each search for the oldest walked over all those deleted before it.
 */
class FreshEntries<V> {
  readonly #entries = new Map<string, { at: number; value: V }>();

  constructor(readonly max: number) {}

  /** The value of `key` set less than COUNTS_FRESH_MS before `now`. */
  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    return entry && now - entry.at < COUNTS_FRESH_MS ? entry.value : undefined;
  }

  /** Keeps `value` for `key`, as the newest entry. */
  set(key: string, value: V, now: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { at: now, value });
    if (this.#entries.size <= this.max) return;
    let drop = this.max / 10;
    for (const oldest of this.#entries.keys()) {
      this.#entries.delete(oldest);
      if (--drop === 0) break;
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}

/**
 * The counts behind a queued task's standing, kept for a second per task. Counting the tasks ahead
 * costs up to AHEAD_COUNT_CAP (queue.ts) index entries, where the rest of a poll is one row: a caller
 * polling a queued task faster than its pollIntervalMs would otherwise pay that on every poll
 * (measured: 4,100 polls/s with the count each time, 5,800 with it read once in the same
 * statement). The task's own state and log are read on every poll, never from here; only where it
 * stands may be up to a second old. Kept per task version: any write to the task counts again.
 * Every create and list page sets some, so a flood of creates fills it: past COUNTS_KEPT the oldest
 * tenth goes.
 */
export class QueueCountsCache {
  readonly #entries = new FreshEntries<{ version: string; counts: QueueCounts }>(COUNTS_KEPT);

  /** Counts of `id` at `version`, read less than a second before `now`. */
  get(id: string, version: string, now: number): QueueCounts | undefined {
    const entry = this.#entries.get(id, now);
    return entry?.version === version ? entry.counts : undefined;
  }

  /** Whether `id` has counts fresh enough that a read need not count again (whatever its version). */
  has(id: string, now: number): boolean {
    return this.#entries.get(id, now) !== undefined;
  }

  /** Keeps `id`'s counts, as the newest entry. */
  set(id: string, version: string, counts: QueueCounts, now: number): void {
    this.#entries.set(id, { version, counts }, now);
  }

  /** How many tasks' counts are kept now. */
  get size(): number {
    return this.#entries.size;
  }
}

/**
 * Owners whose queue of a skill was counted full (`cap` tasks ahead, the most a count reads) less
 * than a second ago, with the counts and the queue place they were read at. A create placed after
 * it in that queue has at least as many ahead, so it is shown those counts instead of reading up to
 * `cap` index entries again: a flood of creates by one owner behind a long queue counted each one's
 * 250 (18% of a create's CPU in the create bench, SQLite; PostgreSQL alike). What may be up to a
 * second old is what a kept count may be (QueueCountsCache): where the task stands, never its state.
 */
export class FullQueues {
  readonly #queues = new FreshEntries<{ queueAt: number; counts: QueueCounts }>(FULL_QUEUES_KEPT);

  constructor(readonly cap: number) {}

  /** The counts a task of `owner` and `skill` placed at `queueAt` has, if its queue is known full. */
  countsAt(owner: string, skill: string, queueAt: number, now: number): QueueCounts | undefined {
    const full = this.#queues.get(`${owner}\n${skill}`, now);
    // Strictly after: at the same queueAt the order is the ids', and the new task's may come first.
    return full && queueAt > full.queueAt ? full.counts : undefined;
  }

  /** Notes the counts of a task just counted; only a full count says anything of the tasks after it. */
  counted(owner: string, skill: string, queueAt: number, counts: QueueCounts, now: number): void {
    if (counts.ahead >= this.cap) this.#queues.set(`${owner}\n${skill}`, { queueAt, counts }, now);
  }
}
