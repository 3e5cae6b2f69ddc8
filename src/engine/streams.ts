import { type EngineContext, notFound } from './context.js';
import type { LoggedEvent } from './events.js';
import { isInterrupted, isTerminal, type TaskRecord, type TaskState, type TaskView } from './task.js';
import { waitForEvents } from './wait.js';

/** What a stream yields: the task as it stands (first), then each event of its log. */
export type StreamItem =
  | { kind: 'task'; seq: number; view: TaskView }
  | { kind: 'event'; entry: LoggedEvent; contextId: string };

export interface SubscribeOptions {
  /** Resume after this event (SSE Last-Event-ID): replay from the log, no task snapshot first. */
  afterSeq?: number;
  /** Refuse a task that is already terminal (SubscribeToTask without a resume point). */
  requireActive?: boolean;
  /**
   * When the stream ends: `settled` (default), after a status that is terminal or waits for the
   * caller (A2A, spec 11.7); `terminal`, only at the end (a stream that follows a task through its
   * waits, as /v1/jobs events do).
   */
  until?: 'settled' | 'terminal';
  /** Whose stream it counts as (MAX_STREAMS), when not the task's owner's: an operator's name. */
  holder?: string;
  /**
   * A slot taken beforehand (Engine.reserveStream), for a stream whose task the same call creates:
   * the stream gives it back when it ends instead of taking one.
   */
  slot?: () => void;
}

/** A stream read as an async generator (stream-generator.ts): it ends when `signal` aborts. */
export interface StreamOptions extends SubscribeOptions {
  signal: AbortSignal;
}

/** The task no longer needs the runner: it is done, or waits for its caller. */
export const settled = (state: TaskState): boolean => isTerminal(state) || isInterrupted(state);

/**
 * Waits until the task's state satisfies `done` or `timeoutMs` passes; returns the record as it
 * then stands. Never throws on timeout: a blocking send returns the task as it is.
 */
export async function waitUntil(
  core: EngineContext,
  id: string,
  done: (state: TaskState) => boolean,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<TaskRecord> {
  const { hub, store, now } = core.journal;
  const deadline = AbortSignal.timeout(timeoutMs);
  const stop = signal ? AbortSignal.any([deadline, signal]) : deadline;
  const wait = waitForEvents(hub, id, stop);
  try {
    for (;;) {
      const found = await store.getTask(id, now());
      if (!found) throw notFound(id);
      if (done(found.state) || stop.aborted) return found;
      await wait.next();
    }
  } finally {
    wait.close();
  }
}
