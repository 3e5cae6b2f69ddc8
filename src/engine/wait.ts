import type { EventHub, LoggedEvent } from './events.js';

export interface EventWait {
  /** Resolves when the task's log grows or the signal aborts (at once if either already happened). */
  next(): Promise<void>;
  /**
   * The buffered entries after `seq` if they follow it without a gap; [] when nothing was heard
   * since the last take; undefined means "read the store" (the first take, after a gap, or after
   * the log grew unheard: another instance wrote).
   */
  takeAfter(seq: number): LoggedEvent[] | undefined;
  /** Resolves a waiting {@link next} with nothing new (a deadline passed): `takeAfter` then says so. */
  wake(): void;
  close(): void;
}

/**
 * Subscribes to a task's committed events before the caller reads the store, so nothing committed
 * between the read and the wait is missed. Buffered entries spare subscribers a store read.
 */
export function waitForEvents(hub: EventHub, taskId: string, signal: AbortSignal): EventWait {
  let buffer: LoggedEvent[] = [];
  let dirty = false;
  // The log may hold entries the buffer lacks: at first (whatever was committed before), and after
  // a touch without entries.
  let unheard = true;
  let wake: (() => void) | undefined;
  const ring = () => {
    dirty = true;
    const w = wake;
    wake = undefined;
    w?.();
  };
  const listener = {
    heard(events: readonly LoggedEvent[]) {
      if (events.length === 0) unheard = true;
      buffer.push(...events);
      ring();
    },
  };
  hub.subscribe(taskId, listener);
  signal.addEventListener('abort', ring, { once: true });
  return {
    next() {
      if (dirty || signal.aborted) {
        dirty = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        wake = () => {
          dirty = false;
          resolve();
        };
      });
    },
    takeAfter(seq) {
      dirty = false;
      const taken = buffer;
      buffer = [];
      const fresh = taken.filter((e) => e.seq > seq);
      if (unheard) {
        unheard = false;
        return undefined;
      }
      // Each subscriber of a task would otherwise read the store after every event it was handed.
      if (fresh.length === 0) return [];
      // Only a gap-free run starting right after `seq` can stand in for a store read.
      const gapFree = fresh.every((e, i) => e.seq === seq + 1 + i);
      return gapFree ? fresh : undefined;
    },
    wake: ring,
    close() {
      hub.unsubscribe(taskId, listener);
      signal.removeEventListener('abort', ring);
      buffer = [];
      wake = undefined;
    },
  };
}
