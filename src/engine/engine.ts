import { randomUUID } from 'node:crypto';
import { type ArtifactFile, artifactFile, withContent as readContent } from './artifact-reader.js';
import { type ArtifactLink, foldArtifacts } from './artifacts.js';
import { EngineError, isEngineError } from './errors.js';
import type { EventHub, LoggedEvent, TaskEvent } from './events.js';
import { type AnswerReceipt, type Grant, grantOf, receiptOf } from './grant.js';
import { uuidv7 } from './ids.js';
import {
  DEFAULT_LIMITS,
  type EngineLimits,
  LIST_PAGE_BYTES,
  refuseOverfullHistory,
  viewBytes,
} from './limits.js';
import { type NewPushConfig, PushConfigs, pushConfigFor } from './push-configs.js';
import type { SkillRegistry } from './registry.js';
import type {
  GuardedWrite,
  ListPage,
  MessageKey,
  StoreChange,
  TaskStore,
  TooManyTasks,
  WriteResult,
} from './store-port.js';
import {
  ANSWERED_BY,
  canTransition,
  isInterrupted,
  isTerminal,
  type Message,
  type TaskRecord,
  type TaskState,
  type TaskView,
} from './task.js';
import { foldView } from './view.js';
import { waitForEvents } from './wait.js';

export type { EngineLimits } from './limits.js';

export interface EngineOptions {
  store: TaskStore;
  hub: EventHub;
  skills: SkillRegistry;
  /** Upper bound on any skill's ttlMs. */
  maxTtlMs: number;
  /** How long cancel waits for a running job to stop before marking it canceled anyway. */
  cancelGraceMs: number;
  clock?: () => number;
  /** Ids of new tasks; default time-ordered {@link uuidv7}. */
  newTaskId?: (now: number) => string;
  /** Unfinished tasks an owner may have at once; 0 for no limit. */
  maxActiveTasks?: number;
  limits?: Partial<EngineLimits>;
  /** Where views link large artifacts: the download route, as callers reach it (a face's to say). */
  artifactUrl: ArtifactLink;
}

/** What a caller may do, as its identity says. */
export interface SendPolicy {
  /** Skills the caller may use; undefined for all. */
  skills?: ReadonlySet<string>;
  /** The name approver lists call this caller by ("tenant/principal", "jwt:tenant/principal"), if any. */
  approverName?: string;
}

/**
 * What a send gives back: the agent's direct reply, the caller's own task, or (to an approver, who
 * answered a task that is not theirs) only the receipt of the answer (see grant.ts).
 */
export type SendResult =
  | { kind: 'message'; message: Message }
  | { kind: 'task'; view: TaskView; created: boolean }
  | { kind: 'answered'; receipt: AnswerReceipt };

export type StreamItem =
  | { kind: 'task'; seq: number; view: TaskView }
  | { kind: 'event'; entry: LoggedEvent };

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
}

export interface ListOptions {
  contextId?: string;
  state?: TaskState;
  statusAfter?: number;
  pageSize: number;
  pageToken?: string;
  historyLength?: number;
  withArtifacts: boolean;
}

const FOLLOW_UP_RETRIES = 3;

/**
 * The task engine: the only code that changes tasks on behalf of callers. It knows no protocol,
 * no HTTP and no SQL; faces call it, the store persists it, the runner executes what it queues.
 *
 * @example
 *   const engine = new Engine({ store, hub: new EventHub(), skills, maxTtlMs, cancelGraceMs: 5000, artifactUrl });
 *   const sent = await engine.send(owner, message);            // a task handle, at once
 *   const view = await engine.get(owner, taskId);              // poll it (another owner: not found)
 *   for await (const item of engine.stream(owner, taskId, { signal })) render(item);
 */
export class Engine {
  readonly #store: TaskStore;
  readonly #hub: EventHub;
  readonly #skills: SkillRegistry;
  readonly #maxTtlMs: number;
  readonly #cancelGraceMs: number;
  readonly now: () => number;
  readonly #newTaskId: (now: number) => string;
  readonly #maxActiveTasks: number;
  readonly limits: EngineLimits;
  readonly artifactUrl: ArtifactLink;
  /** Stream entries with their content read back, shared by every subscriber of the task. */
  readonly #withContent = new WeakMap<LoggedEvent, Promise<LoggedEvent>>();
  readonly #queuedListeners = new Set<() => void>();
  readonly #cancelListeners = new Set<(taskId: string) => void>();
  readonly #pushListeners = new Set<() => void>();
  readonly #statusListeners = new Set<(taskId: string, state: TaskState) => void>();
  /** The webhooks of callers' tasks. */
  readonly push: PushConfigs;

  constructor(options: EngineOptions) {
    this.#store = options.store;
    this.#hub = options.hub;
    this.#skills = options.skills;
    this.#maxTtlMs = options.maxTtlMs;
    this.#cancelGraceMs = options.cancelGraceMs;
    this.now = options.clock ?? Date.now;
    this.#newTaskId = options.newTaskId ?? uuidv7;
    this.#maxActiveTasks = options.maxActiveTasks ?? 0;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.artifactUrl = options.artifactUrl;
    this.push = new PushConfigs(this.#store, this.now);
    this.#store.watch((change) => this.#heard(change));
  }

  get store(): TaskStore {
    return this.#store;
  }

  get skills(): SkillRegistry {
    return this.#skills;
  }

  /** Called whenever a task becomes runnable (the runner claims at once instead of at its next poll). */
  onQueued(listener: () => void): () => void {
    this.#queuedListeners.add(listener);
    return () => this.#queuedListeners.delete(listener);
  }

  /** Called after every state change of any task (the approvals inbox refreshes on them). */
  onStatus(listener: (taskId: string, state: TaskState) => void): () => void {
    this.#statusListeners.add(listener);
    return () => this.#statusListeners.delete(listener);
  }

  /** Called after a write to a task with webhooks (it may have queued notifications). */
  onPushQueued(listener: () => void): () => void {
    this.#pushListeners.add(listener);
    return () => this.#pushListeners.delete(listener);
  }

  /** Called when a cancel is requested for a working task (the runner aborts its job if it holds it). */
  onCancelRequested(listener: (taskId: string) => void): () => void {
    this.#cancelListeners.add(listener);
    return () => this.#cancelListeners.delete(listener);
  }

  /**
   * Delivers a caller's message: to the task it names, or to a new task of the skill it selects.
   * A message whose (owner, messageId) was already delivered returns that task and changes nothing.
   * A webhook given with the message is registered with the task it makes, in the same transaction.
   */
  async send(
    owner: string,
    message: Message,
    metadata?: Record<string, unknown>,
    push?: NewPushConfig,
    policy: SendPolicy = {},
  ): Promise<SendResult> {
    if (message.parts.length > this.limits.maxMessageParts) {
      throw new EngineError(
        'invalid-params',
        `message.parts has ${message.parts.length} parts; at most ${this.limits.maxMessageParts} are accepted`,
      );
    }
    if (message.taskId) {
      // Registered first, so that it hears of what the message sets off.
      if (push) await this.push.put(owner, message.taskId, push);
      return this.#sendToTask(owner, message.taskId, message, policy.approverName);
    }
    // No lookup of messageId first: createTask answers a retry with the task it made, in the same
    // transaction (an expired one, not swept yet, no longer counts: the retry makes a new task).
    const { skill, input } = this.#skills.resolve(message);
    if (policy.skills && !policy.skills.has(skill.id)) {
      throw new EngineError('forbidden', `You may not use the skill "${skill.id}"`);
    }
    const reply = skill.directReply?.(message);
    if (reply) return { kind: 'message', message: reply };

    const now = this.now();
    const id = this.#newTaskId(now);
    const contextId = message.contextId || randomUUID();
    const ttlMs = Math.min(skill.ttlMs, this.#maxTtlMs);
    const stamped: Message = { ...message, taskId: id, contextId };
    const { result, created } = await storeRefusals(
      this.#store.createTask({
        id,
        contextId,
        owner,
        skill: skill.id,
        input,
        metadata,
        createdAt: now,
        expiresAt: now + ttlMs,
        ttlMs,
        pollIntervalMs: skill.pollIntervalMs,
        messageId: message.messageId,
        pushConfigs: push && [pushConfigFor(id, push, now)],
        maxActive: this.#maxActiveTasks || undefined,
        events: [
          { kind: 'message', message: stamped },
          { kind: 'status', state: 'submitted' },
        ],
      }),
    );
    if (!created) return { kind: 'task', view: await this.get(owner, result.record.id), created };
    this.#publish(result);
    this.#queued();
    // The write returned the whole new task: no need to read it back.
    return {
      kind: 'task',
      view: foldView(result.record, result.events, undefined, this.artifactUrl),
      created,
    };
  }

  async #sendToTask(
    owner: string,
    taskId: string,
    message: Message,
    approverName?: string,
  ): Promise<SendResult> {
    for (let attempt = 0; attempt < FOLLOW_UP_RETRIES; attempt++) {
      // Who may answer is decided from the record alone, before the log is read: a refusal costs
      // what a missing task does.
      const record = await this.#store.getTask(taskId, this.now());
      const grant = record && grantOf(record, { owner, approverName });
      if (!record || !grant) throw notFound(taskId);
      // Who answered is the engine's to say (an approver's name, or the owner's own), never the caller's:
      // an owner must not be able to write "Approved by" someone else.
      message = answeredBy(message, approverName);
      if (isTerminal(record.state)) {
        throw new EngineError(
          'unsupported-operation',
          `Task ${taskId} is ${record.state} and accepts no more messages`,
        );
      }
      // To an approver the same refusal whatever the value: a match must not confirm the owner's context.
      if (message.contextId && grant === 'approver') {
        throw new EngineError(
          'invalid-params',
          "message.contextId must be absent: an approver's answer names the task only (the context is its owner's)",
        );
      }
      if (message.contextId && message.contextId !== record.contextId) {
        throw new EngineError('invalid-params', `message.contextId does not match task ${taskId}'s context`);
      }
      await this.#refuseFull(record, message, grant);
      // An answer to an interrupted task queues it to run again; a message to an active task is
      // recorded in its history and never starts a second execution. An approver's grant is guarded
      // too: the write applies only while the task waits (`from`) for them (`approver`), so an answer
      // racing the owner's cannot land on a later wait that names someone else.
      const requeue = isInterrupted(record.state);
      const result = await this.#commit(
        {
          taskId,
          from: [record.state],
          to: requeue ? 'submitted' : undefined,
          events: [{ kind: 'message', message: { ...message, taskId, contextId: record.contextId } }],
          at: this.now(),
          approver: grant === 'approver' ? approverName : undefined,
        },
        { owner, messageId: message.messageId },
      );
      if (!result) continue; // the task moved on meanwhile: look again
      if (requeue && !result.duplicate) this.#queued();
      // An approver never waits on the task, nor reads it: nothing after their answer is theirs.
      if (grant === 'approver' && approverName !== undefined) {
        return { kind: 'answered', receipt: receiptOf(record, result.record, approverName) };
      }
      return { kind: 'task', view: await this.get(record.owner, taskId), created: false };
    }
    throw new EngineError('unsupported-operation', `Task ${taskId} is changing state; retry the message`);
  }

  /**
   * Refuses a message the task's history has no room for. The counts are the owner's: an approver
   * is told that the answer does not fit, not the numbers.
   */
  async #refuseFull(record: TaskRecord, message: Message, grant: Grant): Promise<void> {
    const found = await this.#store.getTaskWithLog(record.id, this.now(), record.owner);
    if (!found) throw notFound(record.id);
    const { history } = foldView(found.record, found.log, undefined, this.artifactUrl);
    try {
      if (history.length >= this.limits.maxHistoryMessages) {
        throw new EngineError(
          'unsupported-operation',
          `Task ${record.id} holds ${history.length} messages, the most it accepts; start a new task`,
        );
      }
      refuseOverfullHistory(record.id, history, message, this.limits.maxHistoryBytes);
    } catch (err) {
      if (grant === 'owner') throw err;
      throw new EngineError(
        'unsupported-operation',
        `Task ${record.id} cannot take this answer (it is full); send a shorter one, or ask its requester`,
      );
    }
  }

  /**
   * A key that changes whenever the task's view may have changed: callers that keep a rendering of
   * a view (keyed by {@link viewVersion} of its record) check it with one cheap read.
   */
  async version(owner: string, id: string): Promise<string> {
    const stamp = await this.#store.getTaskStamp(id, this.now());
    if (!stamp || stamp.owner !== owner) throw notFound(id);
    return viewVersion(stamp);
  }

  /** Tasks waiting for an answer from this caller: its own, or those naming it as approver. */
  async waitingFor(owner: string, approverName: string | undefined, limit = 200): Promise<TaskRecord[]> {
    return this.#store.listWaiting(owner, approverName, this.now(), limit);
  }

  /**
   * Fails the tasks whose wait for input passed its deadline (the runner calls this on its timer).
   * Guarded like any transition: an answer that came first wins.
   */
  async failOverdueInputs(limit = 100): Promise<number> {
    const overdue = await this.#store.overdueInputs(this.now(), limit);
    for (const record of overdue) {
      await this.#commit({
        taskId: record.id,
        from: ['input-required'],
        to: 'failed',
        statusMessage: agentText(record.id, record.contextId, 'No answer came before the deadline'),
        events: [],
        at: this.now(),
      });
    }
    return overdue.length;
  }

  /** The caller's task record alone (one indexed read, no log): its state, handle and owner's data. */
  async record(owner: string, id: string): Promise<TaskRecord> {
    const record = await this.#store.getTask(id, this.now());
    if (!record || record.owner !== owner) throw notFound(id);
    return record;
  }

  async get(owner: string, id: string, historyLength?: number): Promise<TaskView> {
    // Ownership is part of the read: another owner's task costs and answers what a missing id does.
    const found = await this.#store.getTaskWithLog(id, this.now(), owner);
    if (!found) throw notFound(id);
    return foldView(found.record, found.log, historyLength, this.artifactUrl);
  }

  /**
   * One of the caller's artifacts as a file, read from the store a piece at a time (the download
   * route streams it at constant memory, whatever its size).
   */
  async artifactFile(owner: string, id: string, artifactId: string): Promise<ArtifactFile> {
    const found = await this.#store.getTaskWithLog(id, this.now(), owner);
    if (!found) throw notFound(id);
    const artifact = foldArtifacts(found.log).get(artifactId);
    if (!artifact) throw new EngineError('task-not-found', `Task ${id} has no artifact ${artifactId}`);
    return artifactFile(this.#store, id, artifact);
  }

  /**
   * A stream entry as the skill wrote it: the content of an artifact chunk stored out of the log is
   * read back (once per entry, however many subscribers stream it).
   */
  withContent(entry: LoggedEvent): Promise<LoggedEvent> {
    let read = this.#withContent.get(entry);
    if (!read) {
      read = readContent(this.#store, entry, (artifactId) => this.artifactUrl(entry.taskId, artifactId));
      this.#withContent.set(entry, read);
    }
    return read;
  }

  async list(owner: string, o: ListOptions): Promise<{ views: TaskView[]; page: ListPage }> {
    const filter = {
      owner,
      contextId: o.contextId,
      state: o.state,
      statusAfter: o.statusAfter,
      pageToken: o.pageToken,
      now: this.now(),
    };
    const page = await storeRefusals(this.#store.listTasks({ ...filter, pageSize: o.pageSize }));
    const needLog = o.withArtifacts || o.historyLength !== 0;
    if (!needLog)
      return { views: page.records.map((r) => ({ record: r, artifacts: [], history: [] })), page };
    const views: TaskView[] = [];
    let bytes = 0;
    for (const r of page.records) {
      const view = await this.get(owner, r.id, o.historyLength).catch((err: unknown) => {
        // Expired since the page was read: left out. Any other failure is the caller's error.
        if (isEngineError(err) && err.code === 'task-not-found') return undefined;
        throw err;
      });
      if (!view) continue;
      const shown = o.withArtifacts ? view : { ...view, artifacts: [] };
      views.push(shown);
      bytes += viewBytes(shown);
      // A page of many large histories stops short: the next page has the rest.
      if (bytes > LIST_PAGE_BYTES && views.length < page.records.length) {
        const shorter = await this.#store.listTasks({ ...filter, pageSize: views.length });
        return { views, page: { ...shorter, records: views.map((v) => v.record) } };
      }
    }
    return { views, page };
  }

  /**
   * Cancels a task. A queued or interrupted task is canceled at once. A working one has its job's
   * signal aborted; the job gets `cancelGraceMs` to stop, then the task is marked canceled whatever
   * the job does (its later writes are refused by the state guard).
   */
  async cancel(owner: string, id: string): Promise<TaskView> {
    for (;;) {
      const record = await this.record(owner, id);
      if (isTerminal(record.state)) {
        throw new EngineError('task-not-cancelable', `Task ${id} is ${record.state} and cannot be canceled`);
      }
      if (record.state !== 'working') {
        const message = agentText(id, record.contextId, 'Canceled by request');
        const result = await this.#commit({
          taskId: id,
          from: [record.state],
          to: 'canceled',
          statusMessage: message,
          events: [],
          at: this.now(),
        });
        if (result) return this.get(owner, id);
        continue; // claimed or answered meanwhile
      }
      await this.#store.requestCancel(id);
      for (const listener of this.#cancelListeners) listener(id);
      const after = await this.waitUntil(id, isTerminal, this.#cancelGraceMs);
      if (!isTerminal(after.state)) {
        const message = agentText(id, record.contextId, 'Canceled by request (the job did not stop in time)');
        await this.#commit({
          taskId: id,
          from: ['working', 'submitted', 'input-required', 'auth-required'],
          to: 'canceled',
          statusMessage: message,
          releaseLease: true,
          events: [],
          at: this.now(),
        });
      }
      return this.get(owner, id);
    }
  }

  /**
   * Waits until the task's state satisfies `done` or `timeoutMs` passes; returns the record as it
   * then stands. Never throws on timeout: a blocking send returns the task as it is.
   */
  async waitUntil(
    id: string,
    done: (state: TaskState) => boolean,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<TaskRecord> {
    const deadline = AbortSignal.timeout(timeoutMs);
    const stop = signal ? AbortSignal.any([deadline, signal]) : deadline;
    const wait = waitForEvents(this.#hub, id, stop);
    try {
      for (;;) {
        const record = await this.#store.getTask(id, this.now());
        if (!record) throw notFound(id);
        if (done(record.state) || stop.aborted) return record;
        await wait.next();
      }
    } finally {
      wait.close();
    }
  }

  /**
   * The task's stream: its current state first, then each event of its log in order, ending after
   * a status that is terminal or interrupted (input-required, auth-required: the caller must act;
   * spec 11.7). A snapshot ends the stream only when terminal, so a subscriber to a waiting task
   * follows it through its answer. With `afterSeq`, replays what followed that event instead of the
   * snapshot.
   */
  async *stream(owner: string, id: string, o: StreamOptions): AsyncGenerator<StreamItem> {
    const wait = waitForEvents(this.#hub, id, o.signal);
    const ends = o.until === 'terminal' ? isTerminal : settled;
    try {
      let cursor: number;
      if (o.afterSeq === undefined) {
        const view = await this.get(owner, id);
        if (o.requireActive && isTerminal(view.record.state)) {
          throw new EngineError(
            'unsupported-operation',
            `Task ${id} is ${view.record.state}; nothing to stream`,
          );
        }
        yield { kind: 'task', seq: view.record.lastSeq, view };
        if (isTerminal(view.record.state)) return;
        cursor = view.record.lastSeq;
      } else {
        // A resume reads the record alone: the log is replayed from the resume point, not folded.
        const record = await this.record(owner, id);
        // A resume after the last event of an ended task has nothing to wait for.
        if (isTerminal(record.state) && o.afterSeq >= record.lastSeq) return;
        cursor = o.afterSeq;
      }
      while (!o.signal.aborted) {
        const batch = wait.takeAfter(cursor) ?? (await this.#store.readEvents(id, cursor, 500));
        if (batch.length === 0) {
          await wait.next();
          continue;
        }
        for (const entry of batch) {
          cursor = entry.seq;
          yield { kind: 'event', entry };
          if (entry.event.kind === 'status' && ends(entry.event.state)) return;
        }
      }
    } finally {
      wait.close();
    }
  }

  /**
   * A guarded write plus publication of its events to live subscribers. A write that changes the
   * state (`to`) gets its status event here, after the write's own events, so no transition can be
   * logged without one. The runner writes through here too: one path from a change to its streams.
   */
  async commit(write: GuardedWrite): Promise<WriteResult | undefined> {
    return this.#commit(write);
  }

  /** Publishes events that a store call made outside {@link commit} (claims). */
  publish(result: { record: TaskRecord; events: LoggedEvent[] }): void {
    this.#publish(result);
  }

  async #commit(write: GuardedWrite, dedupe?: MessageKey): Promise<WriteResult | undefined> {
    const { to } = write;
    if (!to) return this.#publishing(this.#store.write(write, dedupe));
    // The transition table is the guard: only states that may lead to `to` go into the WHERE clause.
    const from = write.from.filter((state) => canTransition(state, to));
    if (from.length === 0) throw new Error(`no transition leads from ${write.from.join('|')} to ${to}`);
    const events: TaskEvent[] = [
      ...write.events,
      { kind: 'status', state: to, message: write.statusMessage },
    ];
    return this.#publishing(this.#store.write({ ...write, from, events }, dedupe));
  }

  async #publishing(written: Promise<WriteResult | undefined>): Promise<WriteResult | undefined> {
    const result = await written;
    if (result && !result.duplicate) this.#publish(result);
    return result;
  }

  #publish(result: { record: TaskRecord; events: LoggedEvent[] }): void {
    const first = result.events[0];
    if (!first) return;
    this.#hub.publish(first.taskId, result.events);
    if (this.#statusListeners.size > 0) {
      for (const { event } of result.events) {
        if (event.kind !== 'status') continue;
        for (const listener of this.#statusListeners) listener(first.taskId, event.state);
      }
    }
    if (result.record.pushConfigs > 0) for (const listener of this.#pushListeners) listener();
  }

  /** What another instance did to the shared store reaches this one's streams, waits, runner and inbox. */
  #heard(change: StoreChange): void {
    if (change.kind === 'missed') {
      this.#hub.touchAll();
      return;
    }
    if (change.kind === 'cancel-requested') {
      for (const listener of this.#cancelListeners) listener(change.taskId);
      return;
    }
    this.#hub.touch(change.taskId);
    const { state } = change;
    if (state) for (const listener of this.#statusListeners) listener(change.taskId, state);
  }

  #queued(): void {
    for (const listener of this.#queuedListeners) listener();
  }
}

/** The message with `taskhandle.answeredBy` set to `name` (or removed), whatever the sender put there. */
function answeredBy(message: Message, name: string | undefined): Message {
  const { [ANSWERED_BY]: _claimed, ...metadata } = message.metadata ?? {};
  if (name !== undefined) return { ...message, metadata: { ...metadata, [ANSWERED_BY]: name } };
  if (!message.metadata) return message;
  return { ...message, metadata: Object.keys(metadata).length > 0 ? metadata : undefined };
}

/** The store port's refusals, as the engine tells its callers. */
async function storeRefusals<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    const name = (err as { name?: unknown } | undefined)?.name;
    if (name === 'TooManyTasks') {
      throw new EngineError(
        'too-many-tasks',
        `You have ${(err as TooManyTasks).active} unfinished tasks, the most allowed; wait for one to end`,
      );
    }
    if (name === 'InvalidPageToken') throw new EngineError('invalid-params', 'pageToken is not valid');
    throw err;
  }
}

/** See {@link Engine.version}. */
export const viewVersion = (r: { lastSeq: number; updatedAt: number }): string =>
  `${r.lastSeq}:${r.updatedAt}`;

/** The task no longer needs the runner: it is done, or waits for its caller. */
export const settled = (state: TaskState): boolean => isTerminal(state) || isInterrupted(state);

const notFound = (id: string) => new EngineError('task-not-found', `Task ${id} not found`);

/** An agent message with one text part, as status messages carry. */
export function agentText(taskId: string, contextId: string, text: string): Message {
  return { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }], taskId, contextId };
}
