/**
 * The wire shapes of the worker protocol (docs/workers.md), written out here rather than imported
 * from the engine: `taskhandle/worker` runs in processes that hold no server, and must load none.
 */

/** A part of a message or artifact, in A2A v1.0 JSON form (exactly one of text, raw, url, data). */
export interface Part {
  text?: string;
  /** The bytes, base64. */
  raw?: string;
  url?: string;
  data?: unknown;
  filename?: string;
  mediaType?: string;
  metadata?: Record<string, unknown>;
}

/** A message in A2A v1.0 JSON form. */
export interface Message {
  messageId: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: Part[];
  contextId?: string;
  taskId?: string;
  metadata?: Record<string, unknown>;
}

/** A JSON Schema (draft 2020-12 or draft-07), as a plain object. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** An artifact to write (`POST .../artifacts`), or to write with the job's end (`complete`). */
export interface ArtifactWrite {
  /** Default: a new artifact. Reuse an id to replace that artifact, or to add to it with `append`. */
  artifactId?: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
  /** Add these parts to the artifact instead of replacing it. */
  append?: boolean;
  /** This is the artifact's last chunk. */
  lastChunk?: boolean;
}

/** What the server answers every write to a held task: the lease as it stands. */
export interface Lease {
  taskId: string;
  /** `canceled` once the task's owner canceled it: stop the work. */
  state: string;
  leaseExpiresAt?: string;
  /** The owner asked to cancel; the next heartbeat ends the task as canceled. */
  cancelRequested?: boolean;
}

/** An answer to an {@link Job.ask | ask}: its value (the first data part, else the text), who gave it, the message. */
export interface Answer<T = unknown> {
  value: T;
  /** Who answered: the task's owner, or an approver ("tenant/principal", "jwt:tenant/principal"). */
  from: string;
  message: Message;
}

/** A claimed job as `POST /v1/workers/claims` answers it. */
export interface ClaimedJob {
  taskId: string;
  contextId: string;
  skill: string;
  input: unknown;
  message: Message;
  answers?: Answer[];
  attempt: number;
  interrupted: boolean;
  traceparent?: string;
  lease: { token: string; expiresAt: string; heartbeatMs: number };
}
