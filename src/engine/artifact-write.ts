import { randomUUID } from 'node:crypto';
import { partBytes, toBlobPart } from './artifacts.js';
import { JobError } from './errors.js';
import type { EngineLimits } from './limits.js';
import type { ArtifactUpdate } from './skill.js';
import type { GuardedWrite } from './store-port.js';
import type { Artifact } from './task.js';

/** What is known of a task's artifacts before a write adds to them. */
export interface ArtifactsSoFar {
  /** Bytes each artifact already holds (appended chunks add to them). */
  bytes: ReadonlyMap<string, number>;
  /** Artifact bytes the task holds inline (in its log), all artifacts together. */
  inlineBytes: number;
}

/** An artifact write, planned: its id, its event and blobs, and the figures to remember after it. */
export interface ArtifactPlan {
  artifactId: string;
  write: Pick<GuardedWrite, 'events' | 'blobs' | 'storage'>;
  /** The artifact's bytes once written. */
  bytes: number;
  /** Bytes the write adds inline (0 when its content goes beside the log). */
  inlineAdded: number;
}

/**
 * Plans the write of an artifact update, as a job of `owner` makes it: refused with a JobError
 * (`artifact-too-large`) before anything is written when the artifact would outgrow its cap (the
 * server's MAX_ARTIFACT_BYTES, or the skill's own); content past the inline size goes beside the
 * log as blob parts. The inline size bounds the task too: many small artifacts together go by
 * reference as well. The store refuses the write whole past the owner's quota.
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
    inlineAdded: inline ? adding : 0,
    write: {
      events: [{ kind: 'artifact', artifact: { ...rest, parts, artifactId }, append, lastChunk }],
      blobs,
      storage: storageOf(o.owner, adding, limits),
    },
  };
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

/** What a task's folded artifacts ({@link foldArtifacts}) hold: each one's bytes, and those inline. */
export function artifactsSoFar(artifacts: Iterable<Artifact>): ArtifactsSoFar {
  const bytes = new Map<string, number>();
  let inlineBytes = 0;
  for (const a of artifacts) {
    let size = 0;
    for (const p of a.parts) {
      const n = partBytes(p);
      size += n;
      if (!p.blob && p.url === undefined) inlineBytes += n;
    }
    bytes.set(a.artifactId, size);
  }
  return { bytes, inlineBytes };
}
