import type { Logger } from 'pino';
import { runEnded } from '../telemetry/task-spans.js';
import { agentText } from './context.js';
import type { Engine } from './engine.js';
import type { LoggedEvent } from './events.js';
import type { Journal } from './journal.js';
import { backoffMs, failureText, isRetryable } from './retry.js';
import type { ClaimedTask, GuardedWrite, WriteResult } from './store-port.js';
import { ANSWER_SCHEMA, type Message, type TaskRecord } from './task.js';

/** What a holder of leases needs: the engine (skills, reads), the write path, the re-run rules. */
export interface HoldRules {
  engine: Engine;
  journal: Journal;
  /** A task whose runner died more than this many times is failed instead of re-run. */
  maxInterruptions: number;
  /** The jitter of retry backoffs (default Math.random). */
  random?: () => number;
}

/**
 * Publishes what a claim wrote (a fresh claim's `working` status) and tells the observer: a
 * takeover, or a fresh claim with its time in the queue when it is the task's first run (a re-run's
 * wait began with an answer the record no longer dates). Every claimer, runner or worker, does both.
 */
export function announceClaim(journal: Journal, c: ClaimedTask, now: number): void {
  journal.publish(c);
  const { skill, attempts, createdAt } = c.record;
  journal.observer.claimed(
    skill,
    c.interrupted,
    !c.interrupted && attempts === 1 ? now - createdAt : undefined,
  );
}

/**
 * The task and its log as its run starts, after the claim (and a takeover's own write): a fresh
 * claim's own log, unless the task expired since, as the store's reads judge it; a takeover's read
 * from the store. Undefined: the task is gone (expired), and the run must not start.
 */
export async function atRunStart(
  journal: Journal,
  c: ClaimedTask,
): Promise<{ record: TaskRecord; log: LoggedEvent[] } | undefined> {
  const now = journal.now();
  if (c.log) return c.record.expiresAt > now ? { record: c.record, log: c.log } : undefined;
  return journal.store.getTaskWithLog(c.record.id, now);
}

/** A question that parks a run: the task waits in input-required until it is answered. */
export interface Question {
  prompt: string;
  /** Approver names (normalized) who may answer besides the owner. */
  approvers?: string[];
  deadlineMs?: number;
  /** The answer's JSON Schema, shown to callers (forms, elicitation). */
  answerSchema?: Record<string, unknown>;
}

/** How a failed run ended: queued again under its skill's retry policy, failed, or the lease was gone. */
export type FailOutcome = { state: 'submitted'; retryAt: number } | { state: 'failed' } | undefined;

/**
 * A task claimed under a lease, and the writes that end or park its run, each guarded by the lease
 * token: the in-process runner and the workers face (a run on a remote worker) share them, so a run
 * ends the same way whoever did the work. A write that finds the lease gone writes nothing and
 * answers `undefined`.
 *
 * @example
 *   const held = new HeldTask(rules, claim, log);
 *   if (await held.takeOver(claim.interrupted)) await held.finish('completed', held.text('done'));
 */
export class HeldTask {
  readonly record: TaskRecord;
  readonly leaseToken: string;
  readonly #rules: HoldRules;
  readonly #log: Logger;

  constructor(rules: HoldRules, claim: Pick<ClaimedTask, 'record' | 'leaseToken'>, log: Logger) {
    this.#rules = rules;
    this.record = claim.record;
    this.leaseToken = claim.leaseToken;
    this.#log = log;
  }

  /** An agent message of this task. */
  text(t: string): Message {
    return agentText(this.record.id, this.record.contextId, t);
  }

  /**
   * Ends the run in `to`, releasing the lease; what asks for input says who may answer and until when.
   * With `also`, what else the ending writes in the same transaction (a completed task's reply as its
   * artifact: see replyArtifact).
   */
  finish(
    to: 'completed' | 'failed' | 'canceled' | 'rejected' | 'input-required',
    message?: Message,
    waiting?: Pick<Question, 'approvers' | 'deadlineMs'>,
    also?: Pick<GuardedWrite, 'events' | 'blobs' | 'storage' | 'dropBlobs' | 'progress'>,
  ): Promise<WriteResult | undefined> {
    const { journal } = this.#rules;
    runEnded(to);
    return journal.commit({
      ...also,
      taskId: this.record.id,
      from: ['working'],
      to,
      statusMessage: message,
      leaseToken: this.leaseToken,
      releaseLease: true,
      events: also?.events ?? [],
      at: journal.now(),
      approvers: waiting?.approvers,
      inputDeadline: waiting?.deadlineMs === undefined ? undefined : journal.now() + waiting.deadlineMs,
    });
  }

  /**
   * Whether a claimed task is to be run: a takeover (its previous runner died) is failed instead
   * when it keeps interrupting its runners or its skill asks to fail it (`onInterrupt: 'fail'`);
   * otherwise it says it runs again. False also when the lease was lost meanwhile.
   */
  async takeOver(interrupted: boolean): Promise<boolean> {
    if (!interrupted) return true;
    const { engine, journal, maxInterruptions } = this.#rules;
    const { record } = this;
    const log = this.#log;
    if (record.interruptions > maxInterruptions) {
      log.error({ interruptions: record.interruptions }, 'task keeps interrupting its runner; failing it');
      journal.observer.crashLoop(record.skill);
      await this.finish(
        'failed',
        this.text(`Interrupted ${record.interruptions} times (its runner died each time); not run again`),
      );
      return false;
    }
    if (engine.skills.get(record.skill)?.onInterrupt === 'fail') {
      log.warn('task interrupted by a restart; its skill asks to fail it');
      await this.finish(
        'failed',
        this.text('Interrupted by a restart; this skill is not re-run automatically'),
      );
      return false;
    }
    log.info('task interrupted by a restart; running it again');
    const resumed = await journal.commit({
      taskId: record.id,
      from: ['working'],
      to: 'working',
      statusMessage: this.text('Interrupted by a restart; running again'),
      leaseToken: this.leaseToken,
      events: [],
      at: journal.now(),
    });
    return resumed !== undefined;
  }

  /**
   * Parks the run on a question: input-required, the lease released. `asked` is how many answers
   * the run needed (the missing one included): one that came while it ran queues it again at once.
   */
  async park(question: Question, asked: number): Promise<'input-required' | 'submitted' | undefined> {
    const asking = this.text(question.prompt);
    if (question.answerSchema) asking.metadata = { [ANSWER_SCHEMA]: question.answerSchema };
    const parked = await this.finish('input-required', asking, question);
    if (!parked) return undefined;
    return (await this.#requeueIfAnswered(asked)) ? 'submitted' : 'input-required';
  }

  /** Ends the run canceled, as its owner asked. */
  cancel(): Promise<WriteResult | undefined> {
    return this.finish('canceled', this.text('Canceled by request'));
  }

  /** Lets another runner take the task over at once (not counted as an interruption). */
  release(): Promise<void> {
    return this.#rules.journal.store.releaseLease(this.record.id, this.leaseToken);
  }

  /**
   * Fails the run saying `why` (words for the task's owner): queued again instead when the skill's
   * retry policy retries `err` and runs are left, saying which attempt failed and when the next is.
   */
  async fail(err: unknown, why: string): Promise<FailOutcome> {
    const retryAt = await this.#retried(err, why);
    if (retryAt !== undefined) return { state: 'submitted', retryAt };
    const { record } = this;
    const failed = await this.finish('failed', this.text(failureText([...(record.retryReasons ?? []), why])));
    return failed ? { state: 'failed' } : undefined;
  }

  /** When the retry runs, if the failure is retried and the write held; undefined otherwise. */
  async #retried(err: unknown, why: string): Promise<number | undefined> {
    const { engine, journal, random = Math.random } = this.#rules;
    const { record } = this;
    const policy = engine.skills.get(record.skill)?.retry;
    const attempt = record.retries + 1;
    if (!policy || attempt >= policy.attempts || !isRetryable(policy, err)) return undefined;
    const now = journal.now();
    const runAfter = now + backoffMs(policy, record.retries, random);
    const next = new Date(runAfter).toISOString();
    this.#log.warn(
      { attempt, attempts: policy.attempts, runAfter: next },
      'job failed transiently; retrying',
    );
    const written = await journal.commit({
      taskId: record.id,
      from: ['working'],
      to: 'submitted',
      statusMessage: this.text(
        `Attempt ${attempt} of ${policy.attempts} failed: ${why}; next attempt at ${next}`,
      ),
      leaseToken: this.leaseToken,
      releaseLease: true,
      retry: { runAfter, reason: why },
      events: [],
      at: now,
    });
    return written === undefined ? undefined : runAfter;
  }

  /**
   * A run reads the caller's answers when it starts: a message that came while it ran (recorded in
   * the history of the working task) is an answer it did not see. Queue the task again at once
   * rather than wait for the caller to answer twice. The state guard makes this a no-op when the
   * caller's later answer already queued it. True when this queued it.
   */
  async #requeueIfAnswered(asked: number): Promise<boolean> {
    const { engine, journal } = this.#rules;
    const { record } = this;
    const view = await engine.get(record.owner, record.id);
    const answers = view.history.filter((m) => m.role === 'ROLE_USER').length - 1;
    if (answers < asked) return false;
    const queued = await journal.commit({
      taskId: record.id,
      from: ['input-required'],
      to: 'submitted',
      events: [],
      at: journal.now(),
    });
    if (queued) journal.queued();
    return queued !== undefined;
  }
}
