import { Counter, Histogram, type Registry } from 'prom-client';
import type {
  CancelOutcome,
  EngineObserver,
  EngineRefusal,
  JobOutcome,
  StoreOp,
} from '../engine/observer.js';
import type { TaskState } from '../engine/task.js';

/** Seconds: from a few milliseconds (a store write) to a day (a person's answer, a long job). */
const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600, 86_400];
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/**
 * The engine's metrics: what its observer port hears, as this instance's counters and histograms
 * (each instance counts what it did; a sum over instances is the cluster's). Labels are skills,
 * states and outcomes only.
 */
export class EngineMetrics implements EngineObserver {
  readonly #created: Counter<'skill'>;
  readonly #transitions: Counter<'skill' | 'from' | 'to'>;
  readonly #takeovers: Counter<'skill'>;
  readonly #crashLoops: Counter<'skill'>;
  readonly #jobs: Histogram<'skill' | 'outcome'>;
  readonly #queueWait: Histogram<'skill'>;
  readonly #peopleWait: Histogram<'skill'>;
  readonly #cancels: Counter<'skill' | 'outcome'>;
  readonly #refusals: Counter<'reason'>;
  readonly #store: Histogram<'op'>;
  readonly #workerClaims: Counter<'result'>;
  readonly #claimWait: Histogram;
  readonly #leaseLost: Counter;

  constructor(registry: Registry, refusals: Counter<'reason'>) {
    const registers = [registry];
    this.#refusals = refusals;
    this.#created = new Counter({
      name: 'taskhandle_tasks_created_total',
      help: 'Tasks created by this instance, by skill',
      labelNames: ['skill'],
      registers,
    });
    this.#transitions = new Counter({
      name: 'taskhandle_task_transitions_total',
      help: 'State changes this instance committed, by skill and from/to state (from "submitted" for claims; "any" when the write allowed several)',
      labelNames: ['skill', 'from', 'to'],
      registers,
    });
    this.#takeovers = new Counter({
      name: 'taskhandle_lease_takeovers_total',
      help: 'Tasks this instance took over from a runner that died (its lease ran out)',
      labelNames: ['skill'],
      registers,
    });
    this.#crashLoops = new Counter({
      name: 'taskhandle_crash_loop_failures_total',
      help: 'Tasks failed instead of run again: their runner died more than MAX_INTERRUPTIONS times',
      labelNames: ['skill'],
      registers,
    });
    this.#jobs = new Histogram({
      name: 'taskhandle_job_duration_seconds',
      help: "A job's run on this instance, claim to end, by skill and outcome (the state it left, or shutdown/lost/store-failed)",
      labelNames: ['skill', 'outcome'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.#queueWait = new Histogram({
      name: 'taskhandle_queue_wait_seconds',
      help: "Time from a task's creation to its first claim, by skill",
      labelNames: ['skill'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.#peopleWait = new Histogram({
      name: 'taskhandle_input_wait_seconds',
      help: 'Time a task waited for a person (input-required) until it was answered, by skill',
      labelNames: ['skill'],
      buckets: JOB_BUCKETS,
      registers,
    });
    this.#cancels = new Counter({
      name: 'taskhandle_cancels_total',
      help: 'Cancels by how they ended: at-once (not running), in-grace (the job ended within CANCEL_GRACE_MS), forced',
      labelNames: ['skill', 'outcome'],
      registers,
    });
    this.#store = new Histogram({
      name: 'taskhandle_store_seconds',
      help: "The store's create, write and claim calls as the engine waits for them (commit and sync included)",
      labelNames: ['op'],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.#workerClaims = new Counter({
      name: 'taskhandle_worker_claims_total',
      help: "Remote workers' claims this instance answered, by result: tasks (it got some) or empty (its wait ran out)",
      labelNames: ['result'],
      registers,
    });
    this.#claimWait = new Histogram({
      name: 'taskhandle_worker_claim_wait_seconds',
      help: "How long remote workers' claims waited (their long poll) before they were answered",
      buckets: JOB_BUCKETS,
      registers,
    });
    this.#leaseLost = new Counter({
      name: 'taskhandle_worker_lease_lost_total',
      help: "Remote workers' writes refused because their lease no longer held the task (canceled, finished, taken over)",
      registers,
    });
    // Zeroes from the start: a rate() over a series that appears with its first event misses it.
    for (const op of ['create', 'write', 'claim'] as const) this.#store.zero({ op });
    for (const result of ['tasks', 'empty'] as const) this.#workerClaims.inc({ result }, 0);
  }

  created(skill: string): void {
    this.#created.inc({ skill });
  }

  transition(skill: string, from: TaskState | undefined, to: TaskState): void {
    this.#transitions.inc({ skill, from: from ?? 'any', to });
  }

  claimed(skill: string, interrupted: boolean, queuedMs: number | undefined): void {
    if (interrupted) {
      this.#takeovers.inc({ skill });
      return;
    }
    this.#transitions.inc({ skill, from: 'submitted', to: 'working' });
    if (queuedMs !== undefined) this.#queueWait.observe({ skill }, Math.max(0, queuedMs) / 1000);
  }

  crashLoop(skill: string): void {
    this.#crashLoops.inc({ skill });
  }

  jobEnded(skill: string, outcome: JobOutcome, ms: number): void {
    this.#jobs.observe({ skill, outcome }, ms / 1000);
  }

  answered(skill: string, ms: number): void {
    this.#peopleWait.observe({ skill }, Math.max(0, ms) / 1000);
  }

  canceled(skill: string, outcome: CancelOutcome): void {
    this.#cancels.inc({ skill, outcome });
  }

  refused(why: EngineRefusal): void {
    this.#refusals.inc({ reason: why });
  }

  stored(op: StoreOp, ms: number): void {
    this.#store.observe({ op }, ms / 1000);
  }

  workerClaimed(tasks: number, waitedMs: number): void {
    this.#workerClaims.inc({ result: tasks > 0 ? 'tasks' : 'empty' });
    this.#claimWait.observe(Math.max(0, waitedMs) / 1000);
  }

  leaseLost(): void {
    this.#leaseLost.inc();
  }
}
