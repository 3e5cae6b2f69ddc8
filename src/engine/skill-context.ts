import { z } from 'zod';
import {
  type ArtifactsSoFar,
  ArtifactTally,
  planArtifact,
  replyArtifact as replyArtifactOf,
} from './artifact-write.js';
import { agentText } from './context.js';
import { JobError } from './errors.js';
import type { LoggedEvent } from './events.js';
import { normalizeApprovers } from './grant.js';
import type { Journal } from './journal.js';
import type { EngineLimits } from './limits.js';
import type { Answer, ArtifactUpdate, InputRequest, SkillContext, SkillOutcome } from './skill.js';
import { type GuardedWrite, isQuotaExceeded, type WriteResult } from './store-port.js';
import { ANSWERED_BY, type Message, type Progress, type TaskRecord } from './task.js';

/** Thrown by requestInput/ask when the answer is not there yet: the runner parks the task. */
export class InputRequired extends Error {
  constructor(
    readonly prompt: string,
    readonly approvers: string[] = [],
    readonly deadlineMs?: number,
    /** The answer's JSON Schema, when the skill declared a schema that has one. */
    readonly answerSchema?: Record<string, unknown>,
  ) {
    super(`input required: ${prompt}`);
  }
}

/** The task no longer accepts this job's writes (canceled, expired or taken over). */
export class WriteRefused extends Error {
  constructor(taskId: string) {
    super(`task ${taskId} no longer accepts writes from this job`);
  }
}

/**
 * The store could not make a write of this job (connection lost, database restarting, disk full):
 * not the job's fault, so the task is not failed for it (see Runner).
 */
export class StoreFailed extends Error {
  constructor(taskId: string, cause: unknown) {
    super(`the store failed a write of task ${taskId}: ${cause instanceof Error ? cause.message : cause}`, {
      cause,
    });
  }
}

/** Progress is written at most this often; the latest value always wins. */
const PROGRESS_INTERVAL_MS = 250;

/** What a running skill sees of its task. Every write is guarded by the job's lease. */
export class RunContext<I> implements SkillContext<I> {
  readonly taskId: string;
  readonly contextId: string;
  readonly input: I;
  readonly message: Message;
  readonly signal: AbortSignal;
  readonly attempt: number;
  readonly #journal: Journal;
  readonly #limits: EngineLimits;
  readonly #leaseToken: string;
  readonly #controller: AbortController;
  /** The caller's messages after the first: the answers requestInput hands out in order. */
  readonly #answers: Message[];
  #asked = 0;
  readonly #owner: string;
  /** The task's artifacts as this run has them: what earlier runs left, and what it wrote since. */
  readonly #artifacts: ArtifactTally;
  /** The skill's own cap on an artifact's bytes, if it declares one. */
  readonly #maxArtifactBytes: number | undefined;
  #lastProgressAt = 0;
  #lastProgress: Progress | undefined;
  #pendingProgress: Progress | undefined;
  #progressTimer: NodeJS.Timeout | undefined;

  constructor(
    journal: Journal,
    limits: EngineLimits,
    record: TaskRecord,
    leaseToken: string,
    controller: AbortController,
    history: readonly Message[],
    o: {
      /** The skill's own cap on one artifact's bytes. */
      maxArtifactBytes?: number;
      /**
       * The task's artifacts when the run starts (earlier runs'): they count toward the inline
       * size, appends add to them, and writing one again replaces it.
       */
      artifacts?: ArtifactsSoFar;
    } = {},
  ) {
    this.#maxArtifactBytes = o.maxArtifactBytes;
    this.#artifacts = new ArtifactTally(
      o.artifacts ?? { bytes: new Map(), inlineBytes: 0, stored: new Map() },
    );
    const fromCaller = history.filter((m) => m.role === 'ROLE_USER');
    this.taskId = record.id;
    this.contextId = record.contextId;
    this.input = record.input as I;
    this.message = fromCaller[0] ?? { messageId: '', role: 'ROLE_USER', parts: [] };
    this.signal = controller.signal;
    this.attempt = record.attempts;
    this.#journal = journal;
    this.#limits = limits;
    this.#leaseToken = leaseToken;
    this.#controller = controller;
    this.#answers = fromCaller.slice(1);
    this.#owner = record.owner;
  }

  async progress(progress: Progress): Promise<void> {
    // A report that changes nothing is no event: pollers and streams see only real progress.
    if (sameProgress(progress, this.#pendingProgress ?? this.#lastProgress)) return;
    this.#pendingProgress = progress;
    const wait = this.#lastProgressAt + PROGRESS_INTERVAL_MS - this.#journal.now();
    if (wait <= 0) return this.flush();
    this.#progressTimer ??= setTimeout(() => {
      this.#progressTimer = undefined;
      this.flush().catch(() => {});
    }, wait);
  }

  /** Writes any progress still held back by the throttle. */
  async flush(): Promise<void> {
    const progress = this.#takePendingProgress();
    if (!progress) return;
    this.#lastProgress = progress;
    this.#lastProgressAt = this.#journal.now();
    await this.#write({ progress, events: [{ kind: 'progress', progress }] });
  }

  async artifact(update: ArtifactUpdate): Promise<string> {
    // Refused before anything is written: the job fails saying so, what came before stays.
    const plan = this.#plan(update);
    const { events } = await this.#write(plan.write);
    this.#artifacts.wrote(plan, (events[0] as LoggedEvent).seq);
    return plan.artifactId;
  }

  /**
   * What a run that returned writes with its ending, in the ending's own commit: the outcome's
   * artifact (else `reply`, a completed task's message, as its result: see replyArtifact), and
   * its last progress (the outcome's, else one the throttle still holds). Throws the JobError of an
   * artifact over its cap, before anything is written.
   */
  endingWrite(
    outcome: Pick<SkillOutcome, 'artifact' | 'progress'> | undefined,
    reply: Message | undefined,
  ): Pick<GuardedWrite, 'events' | 'blobs' | 'storage' | 'dropBlobs' | 'progress'> | undefined {
    const artifact = outcome?.artifact
      ? this.#plan(outcome.artifact).write
      : replyArtifactOf(reply, this.#artifacts, this.#limits, this.#owner)?.write;
    const held = this.#takePendingProgress();
    const progress = outcome?.progress ?? held;
    if (!artifact && !progress) return undefined;
    return {
      ...artifact,
      events: [...(artifact?.events ?? []), ...(progress ? [{ kind: 'progress' as const, progress }] : [])],
      ...(progress && { progress }),
    };
  }

  /** The progress the throttle still holds, if any, taken from it (its timer stopped). */
  #takePendingProgress(): Progress | undefined {
    clearTimeout(this.#progressTimer);
    this.#progressTimer = undefined;
    const progress = this.#pendingProgress;
    this.#pendingProgress = undefined;
    return progress;
  }

  #plan(update: ArtifactUpdate) {
    return planArtifact(update, this.#artifacts, this.#limits, {
      owner: this.#owner,
      maxArtifactBytes: this.#maxArtifactBytes,
    });
  }

  async say(text: string): Promise<void> {
    const message = agentText(this.taskId, this.contextId, text);
    await this.#write({ to: 'working', statusMessage: message, events: [] });
  }

  async setPollInterval(ms: number): Promise<void> {
    if (!Number.isInteger(ms) || ms <= 0) throw new JobError('poll interval must be a positive integer (ms)');
    await this.#write({ pollIntervalMs: ms, events: [] });
  }

  /** How many answers the job has asked for (the missing one included). */
  get asked(): number {
    return this.#asked;
  }

  async requestInput(prompt: string): Promise<Message> {
    return (await this.ask({ prompt })).message;
  }

  async ask<T = unknown>(request: InputRequest<T>): Promise<Answer<T>> {
    // Checked on every run, not only when the task parks: a bad name fails the job the first time.
    const checked = normalizeApprovers(request.approvers ?? []);
    if ('problem' in checked) throw new JobError(`ask: ${checked.problem}`);
    const approvers = checked.names;
    let refused: string | undefined;
    while (this.#asked < this.#answers.length) {
      const message = this.#answers[this.#asked++] as Message;
      const from = answeredBy(message, this.#owner);
      const raw = answerValue(message);
      if (!request.schema) return { value: raw as T, message, from };
      const parsed = request.schema.safeParse(raw);
      if (parsed.success) return { value: parsed.data, message, from };
      // Replays skip it the same way: a refused answer never counts for a later question.
      refused = parsed.error.issues
        .map((i) => (i.path.length ? `${i.path.join('.')}: ` : '') + i.message)
        .join('; ');
    }
    // One answer more than there are is what this run needs (see Runner's requeue check).
    this.#asked = this.#answers.length + 1;
    const prompt = refused
      ? `${request.prompt}\n(Your last answer was not accepted: ${refused})`
      : request.prompt;
    throw new InputRequired(
      prompt,
      approvers,
      request.deadlineMs,
      request.schema && jsonSchemaOf(request.schema),
    );
  }

  close(): void {
    clearTimeout(this.#progressTimer);
  }

  async #write(
    w: Omit<Parameters<Journal['commit']>[0], 'taskId' | 'from' | 'leaseToken' | 'at'>,
  ): Promise<WriteResult> {
    this.signal.throwIfAborted();
    const result = await this.#journal
      .commit({
        ...w,
        taskId: this.taskId,
        from: ['working'],
        leaseToken: this.#leaseToken,
        at: this.#journal.now(),
      })
      .catch((err: unknown) => {
        // Over its owner's quota: the job's own outcome (it fails saying so), not a store failure.
        if (isQuotaExceeded(err)) throw err;
        throw new StoreFailed(this.taskId, err);
      });
    if (!result) {
      this.#controller.abort('lease-lost');
      throw new WriteRefused(this.taskId);
    }
    return result;
  }
}

/** The JSON Schema of the answers `schema` accepts, or undefined when it has none (a transform, say). */
function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> | undefined {
  try {
    const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
    return Object.keys(json).length > 0 ? json : undefined;
  } catch {
    return undefined; // not representable: the face offers a free-text answer
  }
}

const sameProgress = (a: Progress, b: Progress | undefined): boolean =>
  b !== undefined && a.percent === b.percent && a.message === b.message;

/** Who gave an answer: the approver the engine recorded on it, else the task's owner. */
export const answeredBy = (message: Message, owner: string): string =>
  (message.metadata?.[ANSWERED_BY] as string | undefined) ?? owner;

/** What an answer says: its first data part, else its text (trimmed). */
export function answerValue(message: Message): unknown {
  const data = message.parts.find((p) => p.data !== undefined);
  if (data) return data.data;
  return message.parts
    .map((p) => p.text ?? '')
    .join(' ')
    .trim();
}
