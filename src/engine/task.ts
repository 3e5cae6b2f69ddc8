import type { TraceCarrier } from '../telemetry/trace-context.js';

export type { TraceCarrier };

/**
 * The task record and its lifecycle. States are declared once here, mirrored by a CHECK constraint
 * in the store's schema, and changed only through {@link TRANSITIONS}.
 */

export const TASK_STATES = [
  'submitted',
  'working',
  'input-required',
  'auth-required',
  'completed',
  'failed',
  'canceled',
  'rejected',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

const TERMINAL: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'canceled', 'rejected']);
/** States in which the task waits for its caller rather than for the runner. */
const INTERRUPTED: ReadonlySet<TaskState> = new Set(['input-required', 'auth-required']);

export const isTerminal = (state: TaskState): boolean => TERMINAL.has(state);
export const isInterrupted = (state: TaskState): boolean => INTERRUPTED.has(state);

/**
 * The one transition table. `submitted` is the queued state: the runner claims it and moves it to
 * `working`. A caller's answer moves an interrupted task back to `submitted` so that it is run again.
 */
export const TRANSITIONS: Readonly<Record<TaskState, readonly TaskState[]>> = {
  submitted: ['working', 'canceled', 'rejected', 'failed'],
  // working -> submitted: a failed run queued again under its skill's retry policy.
  working: [
    'working',
    'submitted',
    'input-required',
    'auth-required',
    'completed',
    'failed',
    'canceled',
    'rejected',
  ],
  'input-required': ['submitted', 'canceled', 'failed'],
  'auth-required': ['submitted', 'canceled', 'failed'],
  completed: [],
  failed: [],
  canceled: [],
  rejected: [],
};

export const canTransition = (from: TaskState, to: TaskState): boolean => TRANSITIONS[from].includes(to);

/** A part of a message or artifact, in A2A v1.0 JSON form (exactly one of text, raw, url, data). */
export interface Part {
  text?: string;
  /** base64 bytes */
  raw?: string;
  url?: string;
  data?: unknown;
  filename?: string;
  mediaType?: string;
  metadata?: Record<string, unknown>;
  /**
   * Engine-internal, never shown to callers: the part's content is kept out of the event log, as
   * chunks stored beside the event that holds it (see {@link BlobRef}). Views show the artifact by
   * reference (a download URL); streams read the bytes back.
   */
  blob?: BlobRef;
}

/** What a stored-out-of-line part was, and how many bytes it holds. */
export interface BlobRef {
  /** The field the content came from: bytes (`raw`), `text`, or `data` (stored as its JSON). */
  kind: 'raw' | 'text' | 'data';
  size: number;
}

export type Role = 'ROLE_USER' | 'ROLE_AGENT';

/**
 * Metadata key the engine sets on an answer an approver (not the task's owner) gave: their approver
 * name, which says how they authenticated ("acme/bob" by API key, "jwt:acme/bob" by token).
 */
export const ANSWERED_BY = 'taskhandle.answeredBy';

/**
 * Metadata key of the agent message that asks for input (the input-required status message): the
 * JSON Schema of the answer the skill will accept, when it declared one (`ctx.ask({schema})`), so
 * that a face can offer a form (MCP elicitation) instead of a free-text field.
 */
export const ANSWER_SCHEMA = 'taskhandle.answerSchema';

/** A message in A2A v1.0 JSON form. */
export interface Message {
  messageId: string;
  role: Role;
  parts: Part[];
  contextId?: string;
  taskId?: string;
  metadata?: Record<string, unknown>;
  extensions?: string[];
  referenceTaskIds?: string[];
}

export interface Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
  extensions?: string[];
}

export interface Progress {
  percent?: number;
  message?: string;
}

/** Where a queued task stands, shown on its handle (docs/scheduling.md). */
export interface QueueStanding {
  /** 1 + `ahead`. */
  position: number;
  /** Its owner's queued tasks that run before it (counted up to a cap: at least this many). */
  ahead: number;
  /** What it waits for now. */
  reason: 'no free slot' | 'tenant limit' | 'skill limit' | 'retry backoff';
}

/** The stored task row: everything but its event log. Times are epoch milliseconds. */
export interface TaskRecord {
  id: string;
  contextId: string;
  owner: string;
  skill: string;
  state: TaskState;
  statusMessage?: Message;
  input: unknown;
  metadata?: Record<string, unknown>;
  createdAt: number;
  /** Also the status timestamp: every write that changes the status or progress moves it. */
  updatedAt: number;
  expiresAt: number;
  ttlMs: number;
  pollIntervalMs: number;
  progress?: Progress;
  /** Sequence number of the newest event in this task's log. */
  lastSeq: number;
  /** How many times the runner has claimed this task. */
  attempts: number;
  /** How many of those claims took it over from a runner that died (not from a graceful release). */
  interruptions: number;
  /** The tenant whose share of the runner slots the task uses (see engine/fair-share.ts). */
  tenant: string;
  /** Its place in its owner's queue, as the caller asked (0: as submitted). */
  priority: number;
  /** Times a failed run was queued again under its skill's retry policy (not counting interruptions). */
  retries: number;
  /** While it waits to be retried: not claimed before this time (epoch ms). */
  runAfter?: number;
  /** Why each retried run failed, oldest first. */
  retryReasons?: string[];
  /** Its place in its owner's queue while `submitted` (earlier runs sooner; see engine/fair-share.ts). */
  queueAt: number;
  /** While `submitted`, as a read found it: where the task stands (engine/queue.ts). */
  queue?: QueueStanding;
  cancelRequested: boolean;
  /** Webhooks registered for the task (its writes then queue notifications). */
  pushConfigs: number;
  /** While it waits for input: who besides its owner may answer (approver names, see grant.ts). */
  approvers?: string[];
  /** While it waits for input: when it fails without an answer (epoch ms). */
  inputDeadline?: number;
  /**
   * The span that created the task, in W3C Trace Context form, when tracing was on: its job runs
   * (here or on another instance, after a restart too) start traces of their own linked to it.
   */
  trace?: TraceCarrier;
  /**
   * While it runs: who holds its lease (an in-process runner's name, or a remote worker's: the name
   * it claimed under and its credential) and until when, renewed by each heartbeat. Operators see it.
   */
  lease?: { holder: string; expiresAt: number };
}

/** A task as callers see it: the record plus what its event log adds up to. */
export interface TaskView {
  record: TaskRecord;
  artifacts: Artifact[];
  history: Message[];
}
