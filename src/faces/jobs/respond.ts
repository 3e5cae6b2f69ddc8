import type { Response } from 'express';
import { ownerKey } from '../../auth/principal.js';
import { isTerminal, type TaskRecord } from '../../engine/task.js';
import { principalOf } from '../http/problem.js';
import { setEtag } from './conditions.js';
import { jobDocument, mountOf, retryAfterS } from './document.js';

/** The owner key of the admitted caller. */
export const ownerOf = (res: Response): string => ownerKey(principalOf(res));

/** The job document of a task: the record's alone (a poll never reads the task's log). */
export function sendDocument(res: Response, r: TaskRecord, status = 200): void {
  if (!isTerminal(r.state)) res.set('Retry-After', retryAfterS(r));
  setEtag(res, r);
  res.status(status).json(jobDocument(r, mountOf(res)));
}
