import type { Logger } from 'pino';
import { runEnded, traceRun } from '../telemetry/task-spans.js';
import { artifactsSoFar } from './artifact-write.js';
import { foldArtifacts } from './artifacts.js';
import type { Engine } from './engine.js';
import { isJobError } from './errors.js';
import type { ClaimPolicy } from './fair-share.js';
import { announceClaim, atRunStart, HeldTask } from './held-task.js';
import { type Ending, endingOf } from './job-endings.js';
import type { Journal } from './journal.js';
import type { JobOutcome } from './observer.js';
import { type AbortReason, isRemote, type SkillOutcome } from './skill.js';
import { type InputRequired, RunContext } from './skill-context.js';
import { type ClaimedTask, isQuotaExceeded, type SkillFilter } from './store-port.js';
import type { Message } from './task.js';
import { historyOf } from './view.js';

export interface RunnerOptions {
  /** Reads tasks and finds their skills. */
  engine: Engine;
  /** The write path the runner claims, writes and publishes through (the engine's own). */
  journal: Journal;
  /** Identifies this process in leases (several runners may share one store). */
  workerId: string;
  /** Jobs run at once by this process. */
  concurrency: number;
  /** A lease not renewed for this long lets another runner take the task over. */
  leaseMs: number;
  /** How often to look for runnable tasks besides the wake-ups on submit (catches expired leases). */
  pollMs: number;
  /**
   * A task whose runner died more than this many times is failed instead of re-run: a job that
   * crashes the process must not crash it forever.
   */
  maxInterruptions: number;
  /**
   * Limits of running tasks per skill, per tenant and in all, across every runner of the store
   * (default: the engine's).
   */
  claimPolicy?: ClaimPolicy;
  /** The jitter of retry backoffs (default Math.random). */
  random?: () => number;
  logger: Logger;
}

/** A run that ended without returning, as the ending table sees it. */
interface EndedRun {
  held: HeldTask;
  ctx: RunContext<unknown>;
  log: Logger;
}

/** After aborting at shutdown, how long jobs get to release their lease themselves. */
const ABORT_GRACE_MS = 2000;

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

/**
 * Claims runnable tasks under a lease and runs their skills, at most one execution per task:
 * the claim is a guarded write, every write of the job carries the lease token, and a job whose
 * lease is lost is aborted and can write nothing more.
 *
 * @example
 *   const runner = new Runner({ engine, journal, workerId, concurrency: 16, leaseMs: 30_000, pollMs: 1000, maxInterruptions: 3, logger });
 *   runner.start();                 // claims at once on each submit, and every pollMs
 *   await runner.stop(10_000);      // lets jobs finish, then releases the rest for takeover
 */
export class Runner {
  readonly #options: RunnerOptions;
  readonly #running = new Map<string, Running>();
  readonly #unlisten: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;
  #claiming: Promise<void> | undefined;
  #again = false;
  #stopping = false;
  /** Set when stop() gives up on jobs that ignore their signal: they may no longer renew leases. */
  #halted = false;
  #stopped: Promise<void> | undefined;
  /** Remote skills' tasks are the workers' (faces/workers): this runner never claims them. */
  readonly #local: SkillFilter | undefined;

  constructor(options: RunnerOptions) {
    this.#options = options;
    const { remote } = options.engine.skills;
    this.#local = remote.length > 0 ? { except: remote } : undefined;
  }

  start(): void {
    const { engine, journal, pollMs, logger } = this.#options;
    this.#unlisten.push(journal.onQueued(() => this.wake()));
    this.#unlisten.push(journal.onCancelRequested((id) => this.#running.get(id)?.controller.abort('cancel')));
    this.#timer = setInterval(() => {
      this.wake();
      engine
        .failOverdueInputs()
        .catch((err: unknown) => logger.error({ err }, 'failing overdue inputs failed'));
    }, pollMs);
    this.#timer.unref();
    this.wake();
  }

  get activeJobs(): number {
    return this.#running.size;
  }

  /** Looks for work now; calls made while a claim is in flight coalesce into one more claim. */
  wake(): void {
    if (this.#stopping) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = this.#claimOnce()
      .catch((err: unknown) => this.#options.logger.error({ err }, 'claiming tasks failed'))
      .finally(() => {
        this.#claiming = undefined;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  async #claimOnce(): Promise<void> {
    const free = this.#options.concurrency - this.#running.size;
    if (free <= 0) return;
    const { journal, workerId, leaseMs } = this.#options;
    const started = performance.now();
    const now = journal.now();
    const claimed = await journal.store.claim(
      workerId,
      now,
      leaseMs,
      free,
      this.#options.claimPolicy ?? this.#options.engine.claimPolicy,
      this.#local,
    );
    journal.observer.stored('claim', performance.now() - started);
    for (const c of claimed) {
      announceClaim(journal, c, now);
      this.#start(c);
    }
    if (claimed.length === free) this.#again = true;
  }

  #start(claim: ClaimedTask): void {
    const controller = new AbortController();
    const done = traceRun(claim.record, () => this.#execute(claim, controller))
      .catch((err: unknown) =>
        this.#options.logger.error({ err, taskId: claim.record.id }, 'job bookkeeping failed'),
      )
      .finally(() => {
        this.#running.delete(claim.record.id);
        this.wake();
      });
    this.#running.set(claim.record.id, { controller, done });
  }

  async #execute(claim: ClaimedTask, controller: AbortController): Promise<void> {
    const { engine, journal, logger } = this.#options;
    const { record, leaseToken } = claim;
    const log = logger.child({ taskId: record.id, skill: record.skill, attempt: record.attempts });
    const held = new HeldTask(this.#options, claim, log);
    const started = performance.now();
    const ended = (outcome: JobOutcome) =>
      journal.observer.jobEnded(record.skill, outcome, performance.now() - started);

    const skill = engine.skills.get(record.skill);
    if (!skill) {
      await held.finish('failed', held.text(`This server no longer offers the skill "${record.skill}"`));
      return;
    }
    // Never claimed here (the claim leaves remote skills to workers); released if it ever were.
    if (isRemote(skill)) {
      await held.release();
      return;
    }
    if (!(await held.takeOver(claim.interrupted))) return;

    // Before the heartbeat starts: a task gone meanwhile (expired) must not leave it running.
    const found = await atRunStart(journal, claim);
    if (!found) throw new Error(`task ${record.id} is gone (expired) before its run began`);
    const heartbeat = setInterval(
      () => {
        if (this.#halted) return;
        const now = journal.now();
        journal.store
          .renewLease(record.id, leaseToken, now, now + this.#options.leaseMs)
          .then((lease) => {
            if (!lease.held) controller.abort('lease-lost' satisfies AbortReason);
            else if (lease.cancelRequested) controller.abort('cancel' satisfies AbortReason);
          })
          .catch((err: unknown) => log.error({ err }, 'lease renewal failed'));
      },
      Math.max(50, Math.floor(this.#options.leaseMs / 3)),
    );
    if (record.cancelRequested) controller.abort('cancel' satisfies AbortReason);

    const ctx = new RunContext(
      journal,
      engine.limits,
      record,
      leaseToken,
      controller,
      historyOf(found.record, found.log),
      {
        maxArtifactBytes: skill.maxArtifactBytes,
        artifacts: artifactsSoFar(foldArtifacts(found.log).values()),
      },
    );
    try {
      const outcome: SkillOutcome | undefined = await skill.run(ctx);
      if (controller.signal.aborted) throw controller.signal.reason;
      const message =
        typeof outcome?.message === 'string'
          ? held.text(outcome.message)
          : (outcome?.message as Message | undefined);
      const state = outcome?.state ?? 'completed';
      // Its last artifact and progress, if any, go in the ending's own commit.
      const also = ctx.endingWrite(outcome, state === 'completed' ? message : undefined);
      // No row written: the task changed under the job (canceled, expired or taken over).
      ended((await held.finish(state, message, undefined, also)) ? state : 'lost');
    } catch (err) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : undefined;
      const ending = endingOf(err, reason);
      runEnded(undefined, ending);
      const outcome = await this.#ending[ending]({ held, ctx, log }, err);
      ended(outcome === 'retried' ? 'retried' : JOB_OUTCOMES[ending]);
    } finally {
      clearInterval(heartbeat);
      ctx.close();
    }
  }

  /**
   * What the runner writes (or leaves) for each way a run can end without returning; `failed` says
   * 'retried' when the skill's retry policy queued the task again (counted apart in the metrics).
   */
  readonly #ending: Record<Ending, (run: EndedRun, err: unknown) => Promise<unknown>> = {
    asked: async ({ held, ctx }, err) => {
      const { prompt, approvers, deadlineMs, answerSchema } = err as InputRequired;
      await ctx.flush();
      await held.park({ prompt, approvers, deadlineMs, answerSchema }, ctx.asked);
    },
    canceled: ({ held }) => held.cancel(),
    shutdown: async ({ held, log }) => {
      await held.release();
      log.info('job released at shutdown; another run will take it over');
    },
    lost: async ({ log }) => {
      log.warn('job stopped: the task changed under it (canceled, expired or taken over)');
    },
    // As if this process had died: the task is taken over (re-run, or failed, as its skill
    // declares) once the store answers again; released now if it already does.
    'store-failed': async ({ held, log }, err) => {
      log.error({ err }, 'job stopped: the store failed one of its writes; the task will be taken over');
      await held.release().catch(() => {});
    },
    failed: async ({ held, log }, err) => {
      log.error({ err }, 'job failed');
      // Only a failure raised on purpose is worded for the caller; anything else stays in the log.
      if (isQuotaExceeded(err)) this.#options.journal.observer.refused('storage-quota');
      const why =
        isJobError(err) || isQuotaExceeded(err)
          ? err.message
          : `an internal error in the skill "${held.record.skill}" (the server logged it)`;
      const outcome = await held.fail(err, why);
      return outcome?.state === 'submitted' ? 'retried' : undefined;
    },
  };

  /**
   * Stops claiming, lets running jobs finish until `deadlineMs`, then aborts the rest with reason
   * `shutdown`: they release their lease so that the next start (or another instance) takes them over.
   */
  stop(deadlineMs: number): Promise<void> {
    this.#stopped ??= this.#stop(deadlineMs);
    return this.#stopped;
  }

  async #stop(deadlineMs: number): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#timer);
    for (const unlisten of this.#unlisten) unlisten();
    await this.#claiming;
    const all = () => Promise.all([...this.#running.values()].map((r) => r.done));
    const timedOut = await Promise.race([
      all().then(() => false),
      new Promise<boolean>((r) => setTimeout(r, deadlineMs, true).unref()),
    ]);
    if (!timedOut) return;
    for (const r of this.#running.values()) r.controller.abort('shutdown' satisfies AbortReason);
    // A job that ignores its signal must not hold the shutdown: its lease simply runs out, and once
    // another runner holds it, the job's writes are refused.
    await Promise.race([all(), new Promise((r) => setTimeout(r, ABORT_GRACE_MS).unref())]);
    this.#halted = true;
  }
}

/** What each ending of a run that did not return leaves its task as, for the observer. */
const JOB_OUTCOMES: Record<Ending, JobOutcome> = {
  asked: 'input-required',
  canceled: 'canceled',
  shutdown: 'shutdown',
  lost: 'lost',
  'store-failed': 'store-failed',
  failed: 'failed',
};
