import type { ActivitySeries } from './activity.js';
import { type Answer, type Answered, answer } from './answer.js';
import type { ArtifactFile } from './artifact-reader.js';
import type { ArtifactLink } from './artifacts.js';
import { cancel, failOverdueInputs } from './cancel.js';
import type { EngineContext, Priorities } from './context.js';
import type { LoggedEvent } from './events.js';
import type { ClaimPolicy } from './fair-share.js';
import { awaitGeneration } from './generation.js';
import { uuidv7 } from './ids.js';
import type { Journal } from './journal.js';
import { DEFAULT_LIMITS, type EngineLimits } from './limits.js';
import {
  grantOperator,
  type OperatorGrant,
  type OperatorListFilter,
  type OperatorTask,
  operatorActivity,
  operatorArtifact,
  operatorCancel,
  operatorCounts,
  operatorList,
  operatorRedeliver,
  operatorStream,
  operatorTask,
} from './operator.js';
import type { OperatorPage } from './operator-port.js';
import type { NotificationKey } from './push.js';
import { PushConfigs } from './push-configs.js';
import { AHEAD_COUNT_CAP } from './queue.js';
import { FullQueues, QueueCountsCache } from './queue-counts.js';
import {
  artifactFile,
  get,
  type ListOptions,
  list,
  record,
  version,
  waitingFor,
  withContent,
} from './reads.js';
import type { SkillRegistry } from './registry.js';
import type { ListPage } from './store-port.js';
import { stream } from './stream-generator.js';
import { StreamSlots } from './stream-slots.js';
import { type StreamItem, type StreamOptions, type SubscribeOptions, waitUntil } from './streams.js';
import { type Submission, type Submitted, submit } from './submit.js';
import { type StreamHandle, type StreamSink, subscribe } from './subscription.js';
import type { TaskRecord, TaskState, TaskView } from './task.js';

export interface EngineOptions {
  /** The write path over the store (shared with the runner; see {@link Journal}). */
  journal: Journal;
  skills: SkillRegistry;
  /** Upper bound on any skill's ttlMs. */
  maxTtlMs: number;
  /** How long cancel waits for a running job to stop before marking it canceled anyway. */
  cancelGraceMs: number;
  /** Ids of new tasks; default time-ordered {@link uuidv7}. */
  newTaskId?: (now: number) => string;
  /** Unfinished tasks an owner may have at once; 0 for no limit. */
  maxActiveTasks?: number;
  limits?: Partial<EngineLimits>;
  /** The tenant an owner belongs to; default: each owner is a tenant of its own. */
  tenantOf?: (owner: string) => string;
  /** Bounds of the priority a caller may give; default: max 10, a step of 60 s. */
  priorities?: Priorities;
  /** Limits of running tasks, per skill, per tenant and in all (the runners' default too). */
  claimPolicy?: ClaimPolicy;
  /** Where views link large artifacts: the download route, as callers reach it (a face's to say). */
  artifactUrl: ArtifactLink;
  /** The names (OPERATORS) whose holders may read and act on every owner's tasks; none by default. */
  operators?: ReadonlySet<string>;
}

/**
 * The task engine: the only code that changes tasks on behalf of callers. It knows no protocol,
 * no HTTP and no SQL: every face (A2A, /v1/jobs, the inbox, MCP) calls the same methods with the
 * caller's owner key, and the engine decides what that caller may see before anything heavy is read.
 * Commands (submit.ts, answer.ts, cancel.ts), reads (reads.ts) and streams (streams.ts) live in
 * files of their own; this class holds what they share.
 *
 * @example
 *   const journal = new Journal({ store, hub: new EventHub() });
 *   const engine = new Engine({ journal, skills, maxTtlMs, cancelGraceMs: 5000, artifactUrl });
 *   const { view } = await engine.submit({ owner, skill: 'export', input: { rows: 100 } }); // a handle, at once
 *   await engine.get(owner, view.record.id);                     // poll it (another owner: not found)
 *   for await (const item of engine.stream(owner, view.record.id, { signal })) render(item);
 *   await engine.answer({ owner, taskId, message });             // answer a task that waits
 */
export class Engine {
  readonly #core: EngineContext;
  readonly #operators: ReadonlySet<string>;

  constructor(options: EngineOptions) {
    this.#operators = options.operators ?? new Set();
    const { store, now } = options.journal;
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#core = {
      journal: options.journal,
      skills: options.skills,
      push: new PushConfigs(store, now, limits),
      limits,
      artifactUrl: options.artifactUrl,
      maxTtlMs: options.maxTtlMs,
      cancelGraceMs: options.cancelGraceMs,
      newTaskId: options.newTaskId ?? uuidv7,
      maxActiveTasks: options.maxActiveTasks ?? 0,
      tenantOf: options.tenantOf ?? ((owner) => owner),
      priorities: options.priorities ?? { max: 10, stepMs: 60_000 },
      claimPolicy: options.claimPolicy ?? {},
      queueCounts: new QueueCountsCache(),
      fullQueues: new FullQueues(AHEAD_COUNT_CAP),
      streams: new StreamSlots(limits.maxStreams),
    };
  }

  /** The engine's clock (ms since the epoch). */
  get now(): () => number {
    return this.#core.journal.now;
  }

  get skills(): SkillRegistry {
    return this.#core.skills;
  }

  get claimPolicy(): ClaimPolicy {
    return this.#core.claimPolicy;
  }

  get limits(): EngineLimits {
    return this.#core.limits;
  }

  get artifactUrl(): ArtifactLink {
    return this.#core.artifactUrl;
  }

  /** The webhooks of callers' tasks. */
  get push(): PushConfigs {
    return this.#core.push;
  }

  /** Called after every state change of any task. */
  onStatus(listener: (taskId: string, state: TaskState) => void): () => void {
    return this.#core.journal.onStatus(listener);
  }

  /**
   * Takes one of `holder`'s stream slots (MAX_STREAMS) ahead of a stream: a call that creates a task
   * and streams it is refused (`too-many-streams`) before it creates anything. Hand it to
   * {@link stream} as `slot`, or call it to give the slot back (once).
   */
  reserveStream(holder: string): () => void {
    return this.#core.streams.take(holder);
  }

  /**
   * {@link onStatus} for a page's change stream (the inbox, the console), counted as one of
   * `holder`'s streams: refused past MAX_STREAMS (`too-many-streams`) before it listens, as a task
   * stream is, since each one looks at the store again on changes. The returned function stops
   * listening and gives the slot back.
   */
  watchStatus(holder: string, listener: (taskId: string, state: TaskState) => void): () => void {
    const giveBack = this.reserveStream(holder);
    const off = this.onStatus(listener);
    return () => {
      off();
      giveBack();
    };
  }

  // Commands

  /** Creates a task of the skill the caller chose and queues it; a retry with the same key changes nothing. */
  submit(submission: Submission): Promise<Submitted> {
    return submit(this.#core, submission);
  }

  /** Gives a task the caller's message: the owner gets the task back, an approver a receipt. */
  answer(request: Answer): Promise<Answered> {
    return answer(this.#core, request);
  }

  /** Cancels the caller's task; with `ifGeneration`, only while its generation is that one. */
  cancel(owner: string, id: string, ifGeneration?: number): Promise<TaskView> {
    return cancel(this.#core, owner, id, ifGeneration);
  }

  /** Fails the tasks whose wait for input passed its deadline (the runner calls this on its timer). */
  failOverdueInputs(limit = 100): Promise<number> {
    return failOverdueInputs(this.#core, limit);
  }

  // Reads: each decides ownership with the first, indexed read.

  /** The caller's task record alone (one indexed read, no log). */
  record(owner: string, id: string): Promise<TaskRecord> {
    return record(this.#core, owner, id);
  }

  get(owner: string, id: string, historyLength?: number): Promise<TaskView> {
    return get(this.#core, owner, id, historyLength);
  }

  list(owner: string, options: ListOptions): Promise<{ views: TaskView[]; page: ListPage }> {
    return list(this.#core, owner, options);
  }

  /**
   * A key that changes whenever the task's view may have changed: callers that keep a rendering of
   * a view check it with one cheap read.
   */
  version(owner: string, id: string): Promise<string> {
    return version(this.#core, owner, id);
  }

  /**
   * A long poll (A2A 1.1 draft's GetTask `currentGeneration`): waits until the caller's task has a
   * generation past `after` (at once if it has), at most `waitMs` (capped at MAX_POLL_WAIT_MS);
   * returns the generation it then has. A waiting poll holds one of the caller's stream slots.
   */
  awaitGeneration(
    owner: string,
    id: string,
    after: number,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<number> {
    return awaitGeneration(this.#core, owner, id, after, waitMs, signal);
  }

  /** One of the caller's artifacts as a file, streamed a piece at a time at constant memory. */
  artifactFile(owner: string, id: string, artifactId: string): Promise<ArtifactFile> {
    return artifactFile(this.#core, owner, id, artifactId);
  }

  /** Tasks waiting for an answer from this caller: its own, or those naming it as approver. */
  waitingFor(owner: string, approverName: string | undefined, limit = 200): Promise<TaskRecord[]> {
    return waitingFor(this.#core, owner, approverName, limit);
  }

  // Streams

  /**
   * The task's stream pushed to `sink`: its state first, then each event, ending as
   * `options.until` says; `close()` ends it sooner. What a face that writes frames itself uses.
   */
  subscribe(owner: string, id: string, options: SubscribeOptions, sink: StreamSink): StreamHandle {
    return subscribe(this.#core, owner, id, options, sink);
  }

  /** {@link subscribe} as an async generator, ended by `options.signal` (for callers that pull). */
  stream(owner: string, id: string, options: StreamOptions): AsyncGenerator<StreamItem> {
    return stream(this.#core, owner, id, options);
  }

  /**
   * A stream entry with an artifact chunk stored out of the log read back (once per entry); the
   * entry itself, at once, when it has nothing stored apart.
   */
  withContent(entry: LoggedEvent): LoggedEvent | Promise<LoggedEvent> {
    return withContent(this.#core, entry);
  }

  /** Waits until the task's state satisfies `done` or `timeoutMs` passes; the record as it then stands. */
  waitUntil(
    id: string,
    done: (state: TaskState) => boolean,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<TaskRecord> {
    return waitUntil(this.#core, id, done, timeoutMs, signal);
  }

  // Operators: every owner's tasks, for the console. Each takes the grant decided first.

  /** An operator's grant, if one of the caller's names is in OPERATORS (decided before any read). */
  operatorGrant(names: readonly string[]): OperatorGrant | undefined {
    return grantOperator(this.#operators, names);
  }

  operatorList(grant: OperatorGrant, filter: OperatorListFilter): Promise<OperatorPage> {
    return operatorList(this.#core, grant, filter);
  }

  operatorCounts(grant: OperatorGrant): Promise<Partial<Record<TaskState, number>>> {
    return operatorCounts(this.#core, grant);
  }

  operatorTask(grant: OperatorGrant, id: string): Promise<OperatorTask> {
    return operatorTask(this.#core, grant, id);
  }

  operatorCancel(grant: OperatorGrant, id: string): Promise<TaskView> {
    return operatorCancel(this.#core, grant, id);
  }

  operatorArtifact(grant: OperatorGrant, id: string, artifactId: string): Promise<ArtifactFile> {
    return operatorArtifact(this.#core, grant, id, artifactId);
  }

  /** Any owner's task as a stream, as its owner would follow it. */
  operatorStream(grant: OperatorGrant, id: string, options: StreamOptions): AsyncGenerator<StreamItem> {
    return operatorStream(this.#core, grant, id, options);
  }

  operatorRedeliver(grant: OperatorGrant, key: NotificationKey): Promise<{ owner: string }> {
    return operatorRedeliver(this.#core, grant, key);
  }

  /** The last `windowMs` of activity per minute (finished tasks, queue, run times, webhooks). */
  operatorActivity(grant: OperatorGrant, windowMs: number): Promise<ActivitySeries> {
    return operatorActivity(this.#core, grant, windowMs);
  }
}
