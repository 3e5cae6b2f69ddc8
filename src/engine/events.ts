import type { Artifact, Message, Progress, TaskState } from './task.js';

/** One entry of a task's append-only event log. */
export type TaskEvent =
  | { kind: 'status'; state: TaskState; message?: Message }
  | { kind: 'progress'; progress: Progress }
  | { kind: 'artifact'; artifact: Artifact; append: boolean; lastChunk: boolean }
  | { kind: 'message'; message: Message };

export interface LoggedEvent {
  taskId: string;
  /** 1-based, gap-free per task: the SSE event id. */
  seq: number;
  at: number;
  event: TaskEvent;
}

/**
 * Hears a task's committed entries. An object, not a function: a subscriber that is itself the
 * listener holds no closure per stream (ten thousand open streams held ten thousand).
 */
export interface HubListener {
  heard(events: readonly LoggedEvent[]): void;
}

/**
 * In-process fan-out of committed events. The store is the source of truth; the hub only says
 * "the log of task X grew" and hands over the new entries so that subscribers rarely re-read them.
 * A store shared by several instances feeds the hub from its own notifications ({@link touch}).
 */
export class EventHub {
  readonly #listeners = new Map<string, Set<HubListener>>();

  subscribe(taskId: string, listener: HubListener): void {
    let set = this.#listeners.get(taskId);
    if (!set) {
      set = new Set();
      this.#listeners.set(taskId, set);
    }
    set.add(listener);
  }

  unsubscribe(taskId: string, listener: HubListener): void {
    const current = this.#listeners.get(taskId);
    if (!current) return;
    current.delete(listener);
    if (current.size === 0) this.#listeners.delete(taskId);
  }

  publish(taskId: string, events: readonly LoggedEvent[]): void {
    if (events.length === 0) return;
    this.#call(taskId, events);
  }

  /** The task's log grew elsewhere (another instance): listeners hear it with no entries and read the store. */
  touch(taskId: string): void {
    this.#call(taskId, []);
  }

  /** Anything may have changed unheard: every listener re-reads the store. */
  touchAll(): void {
    for (const taskId of [...this.#listeners.keys()]) this.#call(taskId, []);
  }

  #call(taskId: string, events: readonly LoggedEvent[]): void {
    const set = this.#listeners.get(taskId);
    if (!set) return;
    for (const listener of [...set]) listener.heard(events);
  }

  /** Number of tasks with at least one listener (for tests and metrics). */
  get watchedTasks(): number {
    return this.#listeners.size;
  }
}
