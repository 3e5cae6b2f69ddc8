import type { z } from 'zod';
import type { Message, Part } from './task.js';

/** What the runner does with a task whose previous run died (crash, kill -9, lost lease). */
export type InterruptPolicy = 'rerun' | 'fail';

/** How a run ended, when not simply "completed with no message". */
export interface SkillOutcome {
  state?: 'completed' | 'failed' | 'rejected';
  /** Agent message carried by the final status. */
  message?: string | Message;
  /**
   * An artifact (or the last chunk of one) written with the ending, in the same commit: a job that
   * ends with its result writes once, not twice (`ctx.artifact`, then the ending). Planned as
   * `ctx.artifact` plans it (size caps, inline or by reference, the owner's quota); a refused one
   * fails the job, saying so.
   */
  artifact?: ArtifactUpdate;
  /** The run's last progress report, written with the ending (instead of one write of its own). */
  progress?: { percent?: number; message?: string };
}

export interface ArtifactUpdate {
  /** Defaults to a fresh id; reuse it to append chunks or replace the artifact. */
  artifactId?: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
  /** Append these parts to the artifact instead of replacing it. */
  append?: boolean;
  /** This is the artifact's last chunk. */
  lastChunk?: boolean;
}

export interface SkillContext<I> {
  readonly taskId: string;
  readonly contextId: string;
  readonly input: I;
  /** The message that created the task. */
  readonly message: Message;
  /** Aborted on cancel, shutdown or a lost lease; `signal.reason` is an {@link AbortReason}. */
  readonly signal: AbortSignal;
  /** 1 on the first run; higher when re-run after an interruption or an answer to requestInput. */
  readonly attempt: number;
  /** Reports progress; shown in the task's handle metadata and streamed as a status update. */
  progress(progress: { percent?: number; message?: string }): Promise<void>;
  /** Emits (or appends to) an artifact. */
  artifact(update: ArtifactUpdate): Promise<string>;
  /** Sends an agent message while working (status update, state stays `working`). */
  say(text: string): Promise<void>;
  /** Suggests a new poll interval to callers from now on. */
  setPollInterval(ms: number): Promise<void>;
  /**
   * Asks the caller for input and returns their answer. The task moves to `input-required` and this
   * run ends; the caller's answer queues the task again and the skill runs from the start, where
   * this call now returns the answer at once (the k-th call returns the k-th answer). Work before
   * the call is therefore repeated: keep it cheap or idempotent. The answers are the caller's
   * messages after the first, in order, including any sent while the task was still working.
   */
  requestInput(prompt: string): Promise<Message>;
  /**
   * Like {@link SkillContext.requestInput}, with more say over the answer. `schema` validates its value (the
   * first data part, else the text): an answer that fails it is not taken, and the task waits on in
   * input-required with a status message saying what was wrong. `approvers` may answer besides the
   * task's owner: "tenant/principal" names an API key's principal, "jwt:tenant/principal" a token's
   * subject (a malformed name fails the job). While the task waits, an approver may answer it and
   * gets back only the receipt of that answer (see engine/grant.ts). Without a valid answer within `deadlineMs` of the wait
   * starting, the task fails.
   *
   * @example
   * const { value, from } = await ctx.ask({
   *   prompt: 'Approve the deploy? (approve/reject)', approvers: ['acme/ops-lead'],
   *   schema: z.enum(['approve', 'reject']), deadlineMs: 86_400_000,
   * });
   */
  ask<T = unknown>(request: InputRequest<T>): Promise<Answer<T>>;
}

export interface InputRequest<T = unknown> {
  prompt: string;
  schema?: z.ZodType<T>;
  approvers?: string[];
  deadlineMs?: number;
}

export interface Answer<T> {
  /** The answer's value, as the schema gave it (without one: the text, or the first data part). */
  value: T;
  message: Message;
  /** Who answered: the task's owner, or the approver (as the engine names callers). */
  from: string;
}

/**
 * A JSON Schema (draft 2020-12, or draft-07) for a skill's input, written without zod: a plain object,
 * or `true`. The registry checks it when it is built: one it cannot check as written is refused
 * there, naming the skill (engine/json-schema-check.ts lists what is not supported). Callers' input
 * is validated with the same words as a zod schema's, and `default`s are filled in. The skill's
 * `ctx.input` is `unknown` unless the skill names its type (`defineSkill<{ name: string }>({...})`),
 * which the schema must then guarantee.
 *
 * @example
 * input: {
 *   type: 'object',
 *   properties: { name: { type: 'string' }, formal: { type: 'boolean', default: false } },
 *   required: ['name'],
 *   additionalProperties: false,
 * }
 */
export type JsonSchema = { readonly [keyword: string]: unknown } | boolean;

/**
 * What every skill declares, whether it runs in this process ({@link Skill}) or on workers
 * ({@link RemoteSkill}): how callers find it, what input it takes, how its tasks are kept and run.
 */
export interface SkillBase<I = unknown> {
  id: string;
  name?: string;
  description: string;
  tags?: string[];
  examples?: string[];
  /**
   * Validates the input a caller gives (as /v1/jobs `input`, an A2A `{"skill", "input"}` data part...):
   * a zod schema, or a {@link JsonSchema} for authors who do not use zod.
   */
  input: z.ZodType<I> | JsonSchema;
  /**
   * Builds the input from words ("export 500 rows as ndjson"): how a caller that sends plain text
   * (an A2A message with no data part) is understood. Default: `{}`, the schema's defaults.
   */
  inputFromText?: (text: string) => unknown;
  /** Suggested client poll interval while the task is active. */
  pollIntervalMs: number;
  /** How long the task is kept, from creation (capped by the server's maximum). */
  ttlMs: number;
  onInterrupt: InterruptPolicy;
  /** Runs again a job that failed transiently (docs/scheduling.md, "Retries"). */
  retry?: RetryPolicy;
  /**
   * How many of its jobs may run at once, across every instance sharing the store (default: no
   * limit but the runner slots); the others wait queued. See docs/scheduling.md.
   */
  concurrency?: number;
  /** Bytes one artifact of this skill may hold (one run); the server's MAX_ARTIFACT_BYTES caps it. */
  maxArtifactBytes?: number;
}

/**
 * A skill: what the agent can do, run in this process. Define one with {@link defineSkill}.
 *
 * @example
 * export const hello = defineSkill({
 *   id: 'hello', description: 'Greets', input: z.object({ name: z.string() }),
 *   pollIntervalMs: 1000, ttlMs: 3_600_000, onInterrupt: 'rerun',
 *   async run(ctx) { return { message: `Hello ${ctx.input.name}` }; },
 * });
 */
export interface Skill<I = unknown> extends SkillBase<I> {
  /**
   * Answers some A2A messages at once with a Message and no task (return undefined to make a task).
   * Only the A2A face asks: the other faces always make a task.
   */
  directReply?: (message: Message) => Message | undefined;
  run(ctx: SkillContext<I>): Promise<SkillOutcome | undefined>;
}

export const defineSkill = <I>(skill: Skill<I>): Skill<I> => skill;

/**
 * A skill whose work runs on workers (docs/workers.md): listed, validated and kept like any skill,
 * but no runner of the server claims its tasks; workers claim them over /v1/workers, in any language,
 * on any machine. Define one with {@link defineRemoteSkill}.
 */
export interface RemoteSkill<I = unknown> extends SkillBase<I> {
  readonly remote: true;
}

/**
 * Declares a remote skill: its tasks wait for a worker (`runWorker` from 'taskhandle/worker', or any
 * HTTP client) to claim them.
 *
 * @example
 * export const resize = defineRemoteSkill({
 *   id: 'resize', description: 'Resizes an image', input: z.object({ url: z.string().url() }),
 *   pollIntervalMs: 2000, ttlMs: 86_400_000, onInterrupt: 'rerun',
 * });
 */
export const defineRemoteSkill = <I>(skill: Omit<RemoteSkill<I>, 'remote'>): RemoteSkill<I> => ({
  ...skill,
  remote: true,
});

/**
 * When a failed run is queued again: a `JobError` marked `transient`, or a thrown error whose
 * `code` or `name` is listed in `retryOn`, up to `attempts` runs in all, each after a backoff that
 * doubles from `initialMs` up to `maxMs`, less a random share of at most `jitter` (0 to 1).
 * Retries are counted apart from re-runs after a crash (`interruptions`).
 *
 * @example retry: { attempts: 4, backoff: { initialMs: 1000, maxMs: 60_000, jitter: 0.2 }, retryOn: ['ECONNRESET'] }
 */
export interface RetryPolicy {
  attempts: number;
  backoff?: { initialMs?: number; maxMs?: number; jitter?: number };
  retryOn?: readonly string[];
}

/** A skill of any input type, in-process or remote, as the registry holds it. */
// biome-ignore lint/suspicious/noExplicitAny: the registry is heterogeneous by design; each skill checks its own input.
export type AnySkill = Skill<any> | RemoteSkill<any>;

/** Whether the skill's work runs on workers rather than in this process. */
// biome-ignore lint/suspicious/noExplicitAny: as AnySkill.
export const isRemote = (skill: AnySkill): skill is RemoteSkill<any> =>
  'remote' in skill && skill.remote === true;

/** Why a run's signal was aborted. */
export type AbortReason = 'cancel' | 'shutdown' | 'lease-lost';
