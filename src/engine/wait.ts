import type { EventHub, LoggedEvent } from './events.js';

export interface EventWait {
  /** Resolves when the task's log grows or the signal aborts (at once if either already happened). */
  next(): Promise<void>;
  /** The buffered entries after `seq` if they follow it without a gap; undefined means "read the store". */
  takeAfter(seq: number): LoggedEvent[] | undefined;
  close(): void;
}

/**
 * Subscribes to a task's committed events before the caller reads the store, so nothing committed
 * between the read and the wait is missed. Buffered entries spare subscribers a store read.
 */
export function waitForEvents(hub: EventHub, taskId: string, signal: AbortSignal): EventWait {
  let buffer: LoggedEvent[] = [];
  let dirty = false;
  let wake: (() => void) | undefined;
  const ring = () => {
    dirty = true;
    const w = wake;
    wake = undefined;
    w?.();
  };
  const unsubscribe = hub.subscribe(taskId, (events) => {
    buffer.push(...events);
    ring();
  });
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
      if (taken.length > 0 && fresh.length === 0) return [];
      // Only a gap-free run starting right after `seq` can stand in for a store read.
      const gapFree = fresh.every((e, i) => e.seq === seq + 1 + i);
      return fresh.length > 0 && gapFree ? fresh : undefined;
    },
    close() {
      unsubscribe();
      signal.removeEventListener('abort', ring);
      buffer = [];
      wake = undefined;
    },
  };
}
