import type { Request, Response } from 'express';
import { z } from 'zod';
import { policyOf } from '../../auth/principal.js';
import { isTerminal, type TaskView } from '../../engine/task.js';
import { jsonBody, parsed } from '../http/json-body.js';
import { principalOf } from '../http/problem.js';
import { type Handler, Refused } from '../http/route.js';
import { jobDocument, jobPath, mountOf, resultBody } from './document.js';
import {
  IDEMPOTENCY_METADATA,
  type InFlightKeys,
  KEY_PATTERN,
  messageIdOf,
  payloadHash,
} from './idempotency.js';
import type { JobsOptions } from './options.js';
import { parsePrefer } from './prefer.js';
import { ownerOf, sendDocument } from './respond.js';

const NewJob = z.strictObject({
  skill: z.string().min(1).max(200),
  input: z.unknown().optional(),
  /** Its place among the caller's own jobs (bounds: the engine's, MAX_PRIORITY). */
  priority: z.number().int().optional(),
});

/**
 * `POST /v1/jobs`: 202 Accepted with Location and Retry-After (or, with `Prefer: wait=N`, the result
 * when the job ends within N s). An Idempotency-Key makes a retry return the same job.
 */
export const createJob =
  (o: JobsOptions, inFlight: InFlightKeys): Handler =>
  async (req, res) => {
    const view = await submitted(o, inFlight, req, res);
    res.set('Location', jobPath(view.record.id, mountOf(res)));
    await answerAsPreferred(o, req, res, view);
  };

/**
 * The job the body asks for, created (and audited), or the one an earlier request with the same
 * Idempotency-Key and payload created; one key is answered one request at a time.
 */
async function submitted(
  o: JobsOptions,
  inFlight: InFlightKeys,
  req: Request,
  res: Response,
): Promise<TaskView> {
  const principal = principalOf(res);
  const owner = ownerOf(res);
  const payload = parsed(
    NewJob,
    await jsonBody(req, o),
    'Send {"skill": string, "input": object, "priority"?: integer}',
  );
  const key = req.get('Idempotency-Key');
  if (key !== undefined && !KEY_PATTERN.test(key))
    throw new Refused(400, 'Idempotency-Key: 1 to 255 visible ASCII characters');
  const hash = payloadHash(payload);
  if (key !== undefined && !inFlight.take(owner, key)) {
    throw new Refused(409, `A request with Idempotency-Key "${key}" is still being answered; retry later`);
  }
  try {
    const { view, created } = await o.engine.submit({
      owner,
      skill: payload.skill,
      input: payload.input ?? {},
      priority: payload.priority,
      key: key === undefined ? undefined : messageIdOf(key),
      metadata: key === undefined ? undefined : { [IDEMPOTENCY_METADATA]: { payloadHash: hash } },
      policy: policyOf(principal),
    });
    if (created) {
      o.audit('create', principal, view.record.id);
      return view;
    }
    const stored = view.record.metadata?.[IDEMPOTENCY_METADATA] as { payloadHash?: string } | undefined;
    if (stored?.payloadHash !== hash) {
      throw new Refused(422, `Idempotency-Key "${key}" was used with another payload`);
    }
    return view;
  } finally {
    if (key !== undefined) inFlight.release(owner, key);
  }
}

/**
 * The answer `Prefer` asks for: 202 with the job's document at once (`respond-async`, or none), or
 * after waiting up to `wait=N` s for the job to end, 200 with its document and result if it did.
 */
async function answerAsPreferred(o: JobsOptions, req: Request, res: Response, view: TaskView): Promise<void> {
  const prefer = parsePrefer(req.headers.prefer);
  if (prefer.respondAsync) {
    res.set('Preference-Applied', 'respond-async');
    sendDocument(res, view.record, 202);
    return;
  }
  if (prefer.waitS === undefined) {
    sendDocument(res, view.record, 202);
    return;
  }
  res.set('Preference-Applied', `wait=${prefer.waitS}`);
  await o.engine.waitUntil(view.record.id, isTerminal, prefer.waitS * 1000, o.shutdown);
  const now = await o.engine.get(ownerOf(res), view.record.id);
  if (isTerminal(now.record.state)) {
    res.status(200).json({ ...jobDocument(now.record, mountOf(res)), ...resultBody(now) });
    return;
  }
  sendDocument(res, now.record, 202);
}
