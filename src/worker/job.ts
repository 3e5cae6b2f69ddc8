import type { Answer, ArtifactWrite, JsonSchema, Message } from './types.js';

/** Why a job's signal was aborted: its owner canceled it, the worker stops, or the lease is gone. */
export type AbortReason = 'cancel' | 'shutdown' | 'lease-lost';

/** A file to stream into an artifact with {@link Job.upload}. */
export interface Upload {
  /** Default: a new artifact. */
  artifactId?: string;
  name?: string;
  filename?: string;
  /** Sent as the `Content-Type`; default `application/octet-stream`. */
  mediaType?: string;
  /** Add the bytes to the artifact rather than replace it. */
  append?: boolean;
  /**
   * The bytes: whole, or a stream (a web `ReadableStream`, a Node `Readable`, any async iterable of
   * byte chunks), which is sent as it is read and never held whole.
   */
  body: Uint8Array | string | AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;
}

/** A question for the task's owner (or its approvers), with {@link Job.ask}. */
export interface Question {
  prompt: string;
  /**
   * The JSON Schema of the answer, shown to whoever answers (a form in MCP elicitation). The server
   * does not check an answer against it: check the value yourself.
   */
  schema?: JsonSchema;
  /** Who may answer besides the task's owner: "tenant/principal", "jwt:tenant/principal". */
  approvers?: string[];
  /** Without an answer within this long, the task fails. */
  deadlineMs?: number;
}

/**
 * A claimed job, as a skill handler of {@link runWorker} gets it. Every write carries the job's
 * lease; the heartbeat that keeps it runs on its own while the handler works.
 */
export interface Job<I = unknown> {
  readonly taskId: string;
  readonly contextId: string;
  readonly skill: string;
  /** The task's input, as the skill's input schema validated it on the server. */
  readonly input: I;
  /** The message that created the task. */
  readonly message: Message;
  /** 1 on the first run; higher on each run after an interruption, a retry or an answer. */
  readonly attempt: number;
  /** The previous run of this task died (its worker stopped heartbeating): some of its work may be done. */
  readonly interrupted: boolean;
  /** The W3C trace context of the task, to continue its trace. */
  readonly traceparent: string | undefined;
  /**
   * Aborted when the work must stop; `signal.reason` is an {@link AbortReason}. Once aborted, nothing
   * the handler returns or throws is written: pass it to what the handler awaits.
   */
  readonly signal: AbortSignal;
  /** Reports progress, shown on the task's handle and streamed to its watchers. */
  progress(progress: { percent?: number; message?: string }): Promise<void>;
  /** Sends an agent message while the task stays working. */
  say(text: string): Promise<void>;
  /** Writes (or adds to) an artifact; answers its id. */
  artifact(artifact: ArtifactWrite): Promise<string>;
  /** Streams a file into an artifact (`PUT`); answers its id and how many bytes the server stored. */
  upload(upload: Upload): Promise<{ artifactId: string; bytes: number }>;
  /**
   * Asks for input. The task moves to input-required and this run ends here (the call does not
   * return; nothing the handler does after it is written). Once answered, the task is claimed again
   * and the handler runs **from the start**, where its k-th `ask` now returns the k-th answer at
   * once. Work done before an `ask` is therefore done again: keep it cheap or idempotent. To refuse
   * an answer (it fails your check of `schema`), ask again: the next call takes the next answer.
   */
  ask<T = unknown>(question: Question): Promise<Answer<T>>;
}

/** What a handler returns (or nothing, for "completed" without a message). */
export interface JobResult {
  /** The final status message, shown to the task's owner. */
  message?: string;
  /** `rejected`: the work was refused (not a failure of the worker). Default `completed`. */
  state?: 'completed' | 'rejected';
  /** Artifacts written with the end, before the task ends. */
  artifacts?: ArtifactWrite[];
}

/**
 * The work of one skill. Throw a `JobError` to fail the task with its message; any other error fails
 * it with a generic message (its own goes to `onError`).
 */
export type Handler = (
  // biome-ignore lint/suspicious/noExplicitAny: each handler names its own input type (the server validated it).
  job: Job<any>,
  // biome-ignore lint/suspicious/noConfusingVoidType: a handler may return nothing at all.
) => Promise<JobResult | void> | JobResult | void;
