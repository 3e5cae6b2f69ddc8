import { randomUUID } from 'node:crypto';
import { type LocatedBlob, partBytes, toBlobPart } from './artifacts.js';
import { JobError } from './errors.js';
import type { EngineLimits } from './limits.js';
import type { ArtifactUpdate } from './skill.js';
import type { GuardedWrite } from './store-port.js';
import type { Artifact, Message } from './task.js';

/** What is known of a task's artifacts before a write adds to them. */
export interface ArtifactsSoFar {
  /** Bytes each artifact already holds (appended chunks add to them). */
  bytes: ReadonlyMap<string, number>;
  /** Artifact bytes the task holds inline (in its log), all artifacts together. */
  inlineBytes: number;
  /** Each artifact's content held beside the log (blob parts), by artifact id. */
  stored: ReadonlyMap<string, StoredContent>;
}

/** An artifact's content held beside the log: the events whose blob pieces hold it, and its bytes. */
export interface StoredContent {
  seqs: readonly number[];
  bytes: number;
}

/** An artifact write, planned: its id, its event and blobs, and the figures to remember after it. */
export interface ArtifactPlan {
  artifactId: string;
  write: Pick<GuardedWrite, 'events' | 'blobs' | 'storage'>;
  /** The artifact's bytes once written. */
  bytes: number;
  /** Bytes the write adds inline (0 when its content goes beside the log). */
  inlineAdded: number;
  /** Bytes the write puts beside the log (0 when its content goes inline). */
  storedAdded: number;
  append: boolean;
}

/**
 * Plans the write of an artifact update, as a job of `owner` makes it: refused with a JobError
 * (`artifact-too-large`) before anything is written when the artifact would outgrow its cap (the
 * server's MAX_ARTIFACT_BYTES, or the skill's own); content past the inline size goes beside the
 * log as blob parts. The inline size bounds the task too: many small artifacts together go by
 * reference as well. The store refuses the write whole past the owner's quota.
 *
 * A write that replaces an artifact (same id, not appended) drops the content the artifact held
 * beside the log, in the same transaction, and gives those bytes back to the owner's quota: a job
 * run again (after a crash, or with an answer) that writes its artifacts again holds them once.
 * Content that was inline stays in the log, so it stays counted.
 */
export function planArtifact(
  update: ArtifactUpdate,
  soFar: ArtifactsSoFar,
  limits: EngineLimits,
  o: { owner: string; maxArtifactBytes?: number },
): ArtifactPlan {
  const artifactId = update.artifactId ?? randomUUID();
  const { append = false, lastChunk = false, ...rest } = update;
  const adding = update.parts.reduce((sum, p) => sum + partBytes(p), 0);
  const bytes = (append ? (soFar.bytes.get(artifactId) ?? 0) : 0) + adding;
  const max = artifactCap(limits, o.maxArtifactBytes);
  if (bytes > max) throw tooLarge(artifactId, bytes, max);
  const inline =
    bytes <= limits.inlineArtifactBytes && soFar.inlineBytes + adding <= limits.inlineArtifactBytes;
  const blobs: Buffer[] = [];
  const replaced = append ? undefined : soFar.stored.get(artifactId);
  const parts = inline
    ? rest.parts
    : rest.parts.map((p) => {
        const moved = toBlobPart(p);
        if (!moved) return p;
        blobs.push(moved.data);
        return moved.part;
      });
  return {
    artifactId,
    bytes,
    append,
    inlineAdded: inline ? adding : 0,
    storedAdded: blobs.reduce((sum, b) => sum + b.length, 0),
    write: {
      events: [{ kind: 'artifact', artifact: { ...rest, parts, artifactId }, append, lastChunk }],
      blobs,
      storage: storageOf(o.owner, adding - (replaced?.bytes ?? 0), limits),
      ...(replaced && { dropBlobs: replaced.seqs }),
    },
  };
}

/**
 * A run's running account of its task's artifacts, kept as it writes them (in-process jobs write
 * one after another, so nothing needs reading back): starts from what the log held when it began.
 */
export class ArtifactTally implements ArtifactsSoFar {
  readonly bytes: Map<string, number>;
  readonly stored: Map<string, StoredContent>;
  inlineBytes: number;

  constructor(soFar: ArtifactsSoFar) {
    this.bytes = new Map(soFar.bytes);
    this.stored = new Map(soFar.stored);
    this.inlineBytes = soFar.inlineBytes;
  }

  /** Counts a planned write (or one piece of an upload, planned alike) once the store holds it as event `seq`. */
  wrote(
    plan: Pick<ArtifactPlan, 'artifactId' | 'bytes' | 'inlineAdded' | 'storedAdded' | 'append'>,
    seq: number,
  ): void {
    this.bytes.set(plan.artifactId, plan.bytes);
    this.inlineBytes += plan.inlineAdded;
    const before = plan.append ? this.stored.get(plan.artifactId) : undefined;
    const seqs = plan.storedAdded > 0 ? [...(before?.seqs ?? []), seq] : (before?.seqs ?? []);
    const bytes = (before?.bytes ?? 0) + plan.storedAdded;
    if (seqs.length > 0) this.stored.set(plan.artifactId, { seqs, bytes });
    else this.stored.delete(plan.artifactId);
  }
}

/** The most bytes one artifact may hold: the server's MAX_ARTIFACT_BYTES, or the skill's own cap if lower. */
export const artifactCap = (limits: EngineLimits, skillMax: number | undefined): number =>
  Math.min(limits.maxArtifactBytes, skillMax ?? Number.POSITIVE_INFINITY);

/** The failure of a job whose artifact would outgrow its cap (nothing of the refused part is written). */
export const tooLarge = (artifactId: string, bytes: number, max: number): JobError =>
  new JobError(
    `artifact ${artifactId} would hold ${bytes} bytes; at most ${max} are kept`,
    'artifact-too-large',
  );

/** What a write of `bytes` artifact bytes adds to its owner's stored total, under MAX_STORED_BYTES. */
export const storageOf = (owner: string, bytes: number, limits: EngineLimits): GuardedWrite['storage'] => ({
  owner,
  bytes,
  quota: limits.maxStoredBytes || undefined,
});

/**
 * What a task's folded artifacts ({@link foldArtifacts}: blob parts located in the log) hold: each
 * one's bytes, those inline, and where each one's content beside the log is.
 */
export function artifactsSoFar(artifacts: Iterable<Artifact>): ArtifactsSoFar {
  const bytes = new Map<string, number>();
  const stored = new Map<string, StoredContent>();
  let inlineBytes = 0;
  for (const a of artifacts) {
    let size = 0;
    const seqs = new Set<number>();
    let storedBytes = 0;
    for (const p of a.parts) {
      const n = partBytes(p);
      size += n;
      const seq = (p.blob as Partial<LocatedBlob> | undefined)?.seq;
      if (seq !== undefined) {
        seqs.add(seq);
        storedBytes += n;
      } else if (!p.blob && p.url === undefined) inlineBytes += n;
    }
    bytes.set(a.artifactId, size);
    if (seqs.size > 0) stored.set(a.artifactId, { seqs: [...seqs], bytes: storedBytes });
  }
  return { bytes, inlineBytes, stored };
}

/** Metadata key marking the artifact that holds a task's reply (see {@link replyArtifact}). */
export const REPLY_ARTIFACT = 'taskhandle.reply';

/**
 * The artifact a completed task's reply is written as too, when the task has no artifact: its
 * result. The A2A spec returns results as artifacts ("Messages SHOULD NOT be used to deliver task
 * outputs"), and clients read them there: a2a-ai-provider's streamText streams artifact text only,
 * ADK takes a task's last artifact before its status message, our CLI's `result` prints artifacts.
 * A task with artifacts of its own keeps its reply as its status message only (a summary of them).
 * Marked with {@link REPLY_ARTIFACT}, so a face that shows the status message does not say it twice.
 */
export function replyArtifact(
  reply: Message | undefined,
  soFar: ArtifactsSoFar,
  limits: EngineLimits,
  owner: string,
): ArtifactPlan | undefined {
  if (!reply || reply.parts.length === 0 || soFar.bytes.size > 0) return undefined;
  return planArtifact(
    {
      artifactId: 'reply',
      name: 'reply',
      parts: reply.parts,
      metadata: { [REPLY_ARTIFACT]: true },
      lastChunk: true,
    },
    soFar,
    limits,
    { owner },
  );
}
