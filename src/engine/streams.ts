import { type EngineContext, notFound } from './context.js';
import { EngineError } from './errors.js';
import type { LoggedEvent } from './events.js';
import { get, record } from './reads.js';
import { isInterrupted, isTerminal, type TaskRecord, type TaskState, type TaskView } from './task.js';
import { waitForEvents } from './wait.js';

/** What a stream yields: the task as it stands (first), then each event of its log. */
export type StreamItem =
  | { kind: 'task'; seq: number; view: TaskView }
  | { kind: 'event'; entry: LoggedEvent; contextId: string };

type TaskItem = Extract<StreamItem, { kind: 'task' }>;

export interface StreamOptions {
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
  signal: AbortSignal;
  /** Whose stream it counts as (MAX_STREAMS), when not the task's owner's: an operator's name. */
  holder?: string;
  /**
   * A slot taken beforehand (Engine.reserveStream), for a stream whose task the same call creates:
   * the stream gives it back when it ends instead of taking one.
   */
  slot?: () => void;
}

/** The task no longer needs the runner: it is done, or waits for its caller. */
export const settled = (state: TaskState): boolean => isTerminal(state) || isInterrupted(state);

/** Events read from the store at once when a stream catches up. */
const READ_BATCH = 500;

/**
 * The task's stream: its current state first, then each event of its log in order, ending as
 * `until` says. A snapshot ends the stream only when terminal, so a subscriber to a waiting task
 * follows it through its answer. With `afterSeq`, replays what followed that event instead.
 */
export async function* stream(
  core: EngineContext,
  owner: string,
  id: string,
  o: StreamOptions,
): AsyncGenerator<StreamItem> {
  const { hub, store } = core.journal;
  // Refused before anything is read; given back however the stream ends.
  const giveBack = o.slot ?? core.streams.take(o.holder ?? owner);
  const wait = waitForEvents(hub, id, o.signal);
  const ends = o.until === 'terminal' ? isTerminal : settled;
  try {
    let cursor: number;
    let contextId: string;
    if (o.afterSeq === undefined) {
      let first: TaskItem | undefined = await snapshot(core, owner, id, o.requireActive);
      // A stream may stay open for hours: it keeps the record's numbers, not the whole task.
      cursor = first.seq;
      contextId = first.view.record.contextId;
      const ended = isTerminal(first.view.record.state);
      yield first;
      first = undefined;
      if (ended) return;
    } else {
      // A resume reads the record alone: the log is replayed from the resume point, not folded.
      const found = await record(core, owner, id);
      // A resume after the last event of an ended task has nothing to wait for.
      if (isTerminal(found.state) && o.afterSeq >= found.lastSeq) return;
      cursor = o.afterSeq;
      contextId = found.contextId;
    }
    // A full batch read from the store may not be all: read on before trusting the hub again.
    let more = false;
    while (!o.signal.aborted) {
      const heard: LoggedEvent[] | undefined = more ? undefined : wait.takeAfter(cursor);
      const batch: LoggedEvent[] = heard ?? (await store.readEvents(id, cursor, READ_BATCH));
      more = heard === undefined && batch.length === READ_BATCH;
      if (batch.length === 0) {
        await wait.next();
        continue;
      }
      for (const entry of batch) {
        cursor = entry.seq;
        yield { kind: 'event', entry, contextId };
        if (entry.event.kind === 'status' && ends(entry.event.state)) return;
      }
    }
  } finally {
    wait.close();
    giveBack();
  }
}

/** The stream's first item: the task as it stands. */
async function snapshot(
  core: EngineContext,
  owner: string,
  id: string,
  requireActive: boolean | undefined,
): Promise<TaskItem> {
  const view = await get(core, owner, id);
  if (requireActive && isTerminal(view.record.state)) {
    throw new EngineError('unsupported-operation', `Task ${id} is ${view.record.state}; nothing to stream`);
  }
  return { kind: 'task', seq: view.record.lastSeq, view };
}

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
