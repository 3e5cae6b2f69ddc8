import type { TaskState } from './task.js';

/** How a job's run ended: the state its task was left in, or why it was left to another run. */
export type JobOutcome =
  | 'completed'
  | 'failed'
  /** Failed, and queued again by its skill's retry policy. */
  | 'retried'
  | 'canceled'
  | 'rejected'
  | 'input-required'
  | 'shutdown'
  | 'lost'
  | 'store-failed';

/** How a cancel ended: at once (the task was not running), the job stopped in its grace, or it was forced. */
export type CancelOutcome = 'at-once' | 'in-grace' | 'forced';

/** A refusal the engine decides: the owner's unfinished tasks, or its stored artifact bytes. */
export type EngineRefusal = 'active-tasks' | 'storage-quota';

/** The store calls the engine times (the caller's wait, group commit and sync included). */
export type StoreOp = 'create' | 'write' | 'claim';

/**
 * What the engine tells an observer (metrics) as it works. The engine owns this port and knows
 * nothing of who implements it; every call is made after the fact, never awaited, and must be cheap:
 * it runs on the engine's paths. Labels are bounded: skills, states and outcomes, never task ids.
 */
export interface EngineObserver {
  /** A task was created (a retry that returned an existing task is not). */
  created(skill: string): void;
  /** A committed change of state, here; `from` is undefined when the write allowed several. */
  transition(skill: string, from: TaskState | undefined, to: TaskState): void;
  /**
   * The runner claimed a task: a fresh claim (submitted -> working) after `queuedMs` in the queue
   * when it is the task's first run, or a takeover of a task whose runner died (`interrupted`).
   */
  claimed(skill: string, interrupted: boolean, queuedMs: number | undefined): void;
  /** A task whose runner died too often was failed instead of run again. */
  crashLoop(skill: string): void;
  /** A job's run ended after `ms`. */
  jobEnded(skill: string, outcome: JobOutcome, ms: number): void;
  /** A task that waited for a person was answered after `ms`. */
  answered(skill: string, ms: number): void;
  canceled(skill: string, outcome: CancelOutcome): void;
  refused(why: EngineRefusal): void;
  stored(op: StoreOp, ms: number): void;
  /** A worker's claim was answered after `waitedMs` (its long poll) with `tasks` tasks (0: none came). */
  workerClaimed(tasks: number, waitedMs: number): void;
  /** A worker wrote with a lease that no longer holds its task (refused, nothing written). */
  leaseLost(): void;
}

const nothing = () => {};

/** The observer of an engine nobody watches. */
export const NO_OBSERVER: EngineObserver = {
  created: nothing,
  transition: nothing,
  claimed: nothing,
  crashLoop: nothing,
  jobEnded: nothing,
  answered: nothing,
  canceled: nothing,
  refused: nothing,
  stored: nothing,
  workerClaimed: nothing,
  leaseLost: nothing,
};
