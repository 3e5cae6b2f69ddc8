import type { Request, Response } from 'express';
import type { TaskRecord } from '../../engine/task.js';
import { Refused } from '../http/route.js';

/**
 * Conditional requests of /v1/jobs (RFC 9110 section 13): a job's entity tag is its generation
 * (the task's event log sequence, A2A 1.1 draft section 3.2.7), `"12"`. It changes with every entry
 * of the job's log (status, progress, artifact, answer); the queue standing and the suggested poll
 * interval of a queued job may change under the same tag (they are not the job's state).
 */
export const etagOf = (r: Pick<TaskRecord, 'lastSeq'>): string => `"${r.lastSeq}"`;

/**
 * The generation an `If-Match` names: undefined without one (or with `*`, which any existing job
 * matches). A weak tag never matches (If-Match compares strongly), nor a tag that is not one of
 * ours: both are a generation no job has, refused 412 by the engine's write. Several tags: 400.
 */
export function ifMatchOf(req: Request): number | undefined {
  const tags = entityTags(req.get('If-Match'));
  if (tags === undefined || tags.includes('*')) return undefined;
  if (tags.length !== 1) {
    throw new Refused(400, 'If-Match: send one entity tag, the ETag of the job as you last read it');
  }
  return generationIn(tags[0] ?? '') ?? -1;
}

/** The generation an `If-None-Match` names (a long poll's point), undefined without a tag of ours. */
export function ifNoneMatchOf(req: Request): number | undefined {
  const tags = entityTags(req.get('If-None-Match'));
  if (tags?.length !== 1) return undefined;
  // If-None-Match compares weakly: W/"12" is the generation 12 too.
  return generationIn((tags[0] ?? '').replace(/^W\//, ''));
}

/** The job document's validator, on every answer that shows it. */
export const setEtag = (res: Response, r: Pick<TaskRecord, 'lastSeq'>): void => {
  res.set('ETag', etagOf(r));
};

function entityTags(header: string | undefined): string[] | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  return header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

const generationIn = (tag: string): number | undefined => {
  const m = /^"(\d{1,15})"$/.exec(tag);
  return m ? Number(m[1]) : undefined;
};
