import type { QueueCounts } from './store-port.js';

/** A queued task's counts are read again after this long at most (see {@link QueueCountsCache}). */
const COUNTS_FRESH_MS = 1_000;
/** Tasks whose counts are kept at most; past it the oldest tenth goes (see `set`). */
export const COUNTS_KEPT = 10_000;

/**
 * The counts behind a queued task's standing, kept for a second per task. Counting the tasks ahead
 * costs up to AHEAD_COUNT_CAP (queue.ts) index entries, where the rest of a poll is one row: a caller
 * polling a queued task faster than its pollIntervalMs would otherwise pay that on every poll
 * (measured: 4,100 polls/s with the count each time, 5,800 with it read once in the same
 * statement). The task's own state and log are read on every poll, never from here; only where it
 * stands may be up to a second old. Kept per task version: any write to the task counts again.
 */
export class QueueCountsCache {
  readonly #entries = new Map<string, { version: string; at: number; counts: QueueCounts }>();

  /** Counts of `id` at `version`, read less than a second before `now`. */
  get(id: string, version: string, now: number): QueueCounts | undefined {
    const entry = this.#entries.get(id);
    return entry && entry.version === version && now - entry.at < COUNTS_FRESH_MS ? entry.counts : undefined;
  }

  /** Whether `id` has counts fresh enough that a read need not count again (whatever its version). */
  has(id: string, now: number): boolean {
    const entry = this.#entries.get(id);
    return entry !== undefined && now - entry.at < COUNTS_FRESH_MS;
  }

  /**
   * Keeps `id`'s counts, as the newest entry. Every create and list page sets some, so a flood of
   * creates fills it: past COUNTS_KEPT the oldest tenth goes in one pass. One at a time cost each
   * set 7 µs, not 0.35 (measured, Node 20): a Map's deleted entries stay until it is rebuilt, and
   * each search for the oldest walked over all those deleted before it.
   */
  set(id: string, version: string, counts: QueueCounts, now: number): void {
    this.#entries.delete(id);
    this.#entries.set(id, { version, at: now, counts });
    if (this.#entries.size <= COUNTS_KEPT) return;
    let drop = COUNTS_KEPT / 10;
    for (const oldest of this.#entries.keys()) {
      this.#entries.delete(oldest);
      if (--drop === 0) break;
    }
  }

  /** How many tasks' counts are kept now. */
  get size(): number {
    return this.#entries.size;
  }
}
