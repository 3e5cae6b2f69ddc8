import type { EventHub, LoggedEvent, TaskEvent } from './events.js';
import { type EngineObserver, NO_OBSERVER } from './observer.js';
import type { GuardedWrite, MessageKey, StoreChange, TaskStore, WriteResult } from './store-port.js';
import { canTransition, type TaskRecord, type TaskState } from './task.js';

export interface JournalOptions {
  store: TaskStore;
  hub: EventHub;
  clock?: () => number;
  /** Hears what the engine does (metrics); default: nobody. */
  observer?: EngineObserver;
}

type Listeners<F> = Set<F>;

/**
 * The engine's write path and what hears of it: every change of a task is one guarded write,
 * published to live subscribers (streams, waits) and to the listeners (runner, inbox, dispatcher).
 * Callers never see it: the engine's commands, the runner and the skill context write through it,
 * and the composition root hands it to those three only.
 *
 * @example
 *   const journal = new Journal({ store, hub: new EventHub() });
 *   const engine = new Engine({ journal, skills, maxTtlMs, cancelGraceMs, artifactUrl });
 *   const runner = new Runner({ engine, journal, workerId, concurrency, leaseMs, pollMs, maxInterruptions, logger });
 */
export class Journal {
  readonly store: TaskStore;
  readonly hub: EventHub;
  readonly now: () => number;
  readonly observer: EngineObserver;
  readonly #queued: Listeners<() => void> = new Set();
  readonly #cancels: Listeners<(taskId: string) => void> = new Set();
  readonly #push: Listeners<() => void> = new Set();
  readonly #status: Listeners<(taskId: string, state: TaskState) => void> = new Set();

  constructor(options: JournalOptions) {
    this.store = options.store;
    this.hub = options.hub;
    this.now = options.clock ?? Date.now;
    this.observer = options.observer ?? NO_OBSERVER;
    this.store.watch((change) => this.#heard(change));
  }

  /** Called whenever a task becomes runnable (the runner claims at once instead of at its next poll). */
  onQueued(listener: () => void): () => void {
    return listen(this.#queued, listener);
  }

  /** Called after every state change of any task, here or (through the store) on another instance. */
  onStatus(listener: (taskId: string, state: TaskState) => void): () => void {
    return listen(this.#status, listener);
  }

  /** Called after a write to a task with webhooks (it may have queued notifications). */
  onPushQueued(listener: () => void): () => void {
    return listen(this.#push, listener);
  }

  /** Called when a cancel is requested for a working task (the runner aborts its job if it holds it). */
  onCancelRequested(listener: (taskId: string) => void): () => void {
    return listen(this.#cancels, listener);
  }

  /** A task became runnable. */
  queued(): void {
    for (const listener of this.#queued) listener();
  }

  /** Notifications became due outside a write (an operator queued a dead letter again). */
  pushQueued(): void {
    for (const listener of this.#push) listener();
  }

  /** A cancel was requested for a working task. */
  cancelRequested(taskId: string): void {
    for (const listener of this.#cancels) listener(taskId);
  }

  /**
   * A guarded write plus publication of its events. A write that changes the state (`to`) gets its
   * status event here, after the write's own events, so no transition can be logged without one.
   * A write that matches no row (the task moved on, the lease was lost) returns undefined.
   */
  async commit(write: GuardedWrite, dedupe?: MessageKey): Promise<WriteResult | undefined> {
    const { to } = write;
    if (!to) return this.#write(write, dedupe);
    // The transition table is the guard: only states that may lead to `to` go into the WHERE clause.
    const from = write.from.filter((state) => canTransition(state, to));
    if (from.length === 0) throw new Error(`no transition leads from ${write.from.join('|')} to ${to}`);
    const events: TaskEvent[] = [
      ...write.events,
      { kind: 'status', state: to, message: write.statusMessage },
    ];
    const result = await this.#write({ ...write, from, events }, dedupe);
    if (result && !result.duplicate)
      this.observer.transition(result.record.skill, from.length === 1 ? from[0] : undefined, to);
    return result;
  }

  /** Publishes events that a store call made outside {@link commit} (task creation, claims). */
  publish(result: { record: TaskRecord; events: LoggedEvent[] }): void {
    const first = result.events[0];
    if (!first) return;
    this.hub.publish(first.taskId, result.events);
    if (this.#status.size > 0) {
      for (const { event } of result.events) {
        if (event.kind !== 'status') continue;
        for (const listener of this.#status) listener(first.taskId, event.state);
      }
    }
    if (result.record.pushConfigs > 0) for (const listener of this.#push) listener();
  }

  async #write(write: GuardedWrite, dedupe?: MessageKey): Promise<WriteResult | undefined> {
    const started = performance.now();
    const result = await this.store.write(write, dedupe);
    this.observer.stored('write', performance.now() - started);
    if (result && !result.duplicate) this.publish(result);
    return result;
  }

  /** What another instance did to the shared store reaches this one's streams, waits, runner and inbox. */
  #heard(change: StoreChange): void {
    if (change.kind === 'missed') {
      this.hub.touchAll();
      return;
    }
    if (change.kind === 'cancel-requested') {
      this.cancelRequested(change.taskId);
      return;
    }
    this.hub.touch(change.taskId);
    const { state } = change;
    if (state) for (const listener of this.#status) listener(change.taskId, state);
  }
}

function listen<F>(set: Listeners<F>, listener: F): () => void {
  set.add(listener);
  return () => set.delete(listener);
}
