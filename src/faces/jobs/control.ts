import type { Request, Response } from 'express';
import { z } from 'zod';
import { isEngineError } from '../../engine/errors.js';
import { isTerminal, type Part, type TaskRecord } from '../../engine/task.js';
import { answerTask } from '../answer.js';
import { jsonBody } from '../http/json-body.js';
import { principalOf } from '../http/problem.js';
import { type Handler, Refused } from '../http/route.js';
import { STATE_NAMES } from '../states.js';
import { etagOf, ifMatchOf } from './conditions.js';
import { jobDocument } from './document.js';
import type { JobsOptions } from './options.js';
import { ownerOf, sendDocument } from './respond.js';

const Answer = z.union([z.strictObject({ text: z.string().min(1) }), z.strictObject({ data: z.unknown() })]);

/**
 * Cancels a job. DELETE asks for the job to stop: a finished one already has (200 with its
 * document); POST `:cancel` says it is too late (409).
 */
async function cancel(
  o: JobsOptions,
  req: Request,
  res: Response,
  id: string,
  method: 'post' | 'delete',
): Promise<void> {
  const owner = ownerOf(res);
  const ifGeneration = ifMatchOf(req);
  const current = await o.engine.record(owner, id);
  // A precondition is evaluated before the method (RFC 9110 section 13.2.2); the engine's write
  // checks it again, atomically.
  if (ifGeneration !== undefined && current.lastSeq !== ifGeneration) throw stale(id, ifGeneration, current);
  if (isTerminal(current.state)) {
    if (method === 'delete') {
      sendDocument(res, current);
      return;
    }
    throw new Refused(409, `Job ${id} is ${jobDocument(current).status} and cannot be cancelled`);
  }
  const view = await o.engine.cancel(owner, id, ifGeneration);
  o.audit('cancel', principalOf(res), id);
  sendDocument(res, view.record);
}

/** `DELETE /v1/jobs/{id}`. */
export const deleteJob =
  (o: JobsOptions): Handler =>
  (req, res) =>
    cancel(o, req, res, String(req.params.id), 'delete');

/**
 * `POST /v1/jobs/{id}:cancel` and `{id}:input` (AIP-136 custom methods): one path segment, split at
 * its last colon. An answer comes from the owner or an approver the waiting task names; an approver
 * gets the receipt only.
 */
export const jobMethod =
  (o: JobsOptions): Handler =>
  async (req, res) => {
    const target = String(req.params.target);
    const at = target.lastIndexOf(':');
    const id = target.slice(0, at);
    const verb = at < 0 ? '' : target.slice(at + 1);
    if (verb === 'cancel') return cancel(o, req, res, id, 'post');
    if (verb !== 'input') throw new Refused(404, 'No such job method: use {id}:cancel or {id}:input');
    const parsed = Answer.safeParse(await jsonBody(req, o));
    if (!parsed.success) throw new Refused(400, 'Send {"text": string} or {"data": ...}');
    const owner = ownerOf(res);
    const principal = principalOf(res);
    // The owner is told why a job takes no input; to anyone else, the engine answers (an approver's
    // grant, or not found).
    const current = await o.engine.record(owner, id).catch((err: unknown) => {
      if (isEngineError(err) && err.code === 'task-not-found') return undefined;
      throw err; // a store failure is the caller's 500, not a "not yours"
    });
    const ifGeneration = ifMatchOf(req);
    if (current && ifGeneration !== undefined && current.lastSeq !== ifGeneration) {
      throw stale(id, ifGeneration, current);
    }
    if (current && jobDocument(current).status !== 'input_required') {
      throw new Refused(409, `Job ${id} is ${jobDocument(current).status}; it waits for no input`);
    }
    const part: Part = 'text' in parsed.data ? { text: parsed.data.text } : { data: parsed.data.data };
    const answered = await answerTask(o.engine, o.audit, principal, id, [part], ifGeneration);
    // An approver (not the owner) gets the receipt only: the job itself is not theirs to read.
    if (answered.grant === 'approver') {
      res.json({ taskId: id, status: STATE_NAMES[answered.receipt.state].jobs });
      return;
    }
    sendDocument(res, answered.record);
  };

/** 412: the job changed since the caller read the ETag its If-Match names. */
function stale(id: string, expected: number, current: TaskRecord): Refused {
  return new Refused(
    412,
    `Job ${id} changed since you read it: If-Match names "${expected}", its ETag is now ${etagOf(current)}; GET it again and decide with what it holds now`,
    { currentGeneration: current.lastSeq },
  );
}
