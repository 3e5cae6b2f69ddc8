import type { Request, Response } from 'express';
import { ownerKey } from '../../auth/principal.js';
import { isTerminal, type TaskRecord } from '../../engine/task.js';
import { type BodyLimits, BodyRefused, isJsonContentType, readJson } from '../http/body.js';
import { principalOf } from '../http/problem.js';
import { Refused } from '../http/route.js';
import { jobDocument, mountOf, retryAfterS } from './document.js';

/** The owner key of the admitted caller. */
export const ownerOf = (res: Response): string => ownerKey(principalOf(res));

/** A JSON request body within the limits, or a refusal (415, 413, 400) in problem form. */
export async function jsonBody(req: Request, limits: BodyLimits): Promise<unknown> {
  if (!isJsonContentType(req.headers['content-type'])) throw new Refused(415, 'Send application/json');
  try {
    return await readJson(req, limits);
  } catch (err) {
    if (err instanceof BodyRefused) throw new Refused(err.status, err.message);
    throw err;
  }
}

/** The job document of a task: the record's alone (a poll never reads the task's log). */
export function sendDocument(res: Response, r: TaskRecord, status = 200): void {
  if (!isTerminal(r.state)) res.set('Retry-After', retryAfterS(r));
  res.status(status).json(jobDocument(r, mountOf(res)));
}
