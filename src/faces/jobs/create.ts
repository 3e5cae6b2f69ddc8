import { z } from 'zod';
import { policyOf } from '../../auth/principal.js';
import { isTerminal, type TaskView } from '../../engine/task.js';
import { jsonBody } from '../http/json-body.js';
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
    const principal = principalOf(res);
    const owner = ownerOf(res);
    const parsed = NewJob.safeParse(await jsonBody(req, o));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Refused(
        400,
        `Send {"skill": string, "input": object, "priority"?: integer}: ${issue?.path.join('.') || 'body'}: ${issue?.message}`,
      );
    }
    const payload = parsed.data;
    const key = req.get('Idempotency-Key');
    if (key !== undefined && !KEY_PATTERN.test(key))
      throw new Refused(400, 'Idempotency-Key: 1 to 255 visible ASCII characters');
    const hash = payloadHash(payload);
    if (key !== undefined && !inFlight.take(owner, key)) {
      throw new Refused(409, `A request with Idempotency-Key "${key}" is still being answered; retry later`);
    }
    let view: TaskView;
    try {
      const result = await o.engine.submit({
        owner,
        skill: payload.skill,
        input: payload.input ?? {},
        priority: payload.priority,
        key: key === undefined ? undefined : messageIdOf(key),
        metadata: key === undefined ? undefined : { [IDEMPOTENCY_METADATA]: { payloadHash: hash } },
        policy: policyOf(principal),
      });
      view = result.view;
      if (!result.created) {
        const stored = view.record.metadata?.[IDEMPOTENCY_METADATA] as { payloadHash?: string } | undefined;
        if (stored?.payloadHash !== hash) {
          throw new Refused(422, `Idempotency-Key "${key}" was used with another payload`);
        }
      } else o.audit('create', principal, view.record.id);
    } finally {
      if (key !== undefined) inFlight.release(owner, key);
    }
    res.set('Location', jobPath(view.record.id, mountOf(res)));
    const prefer = parsePrefer(req.headers.prefer);
    if (prefer.respondAsync) {
      res.set('Preference-Applied', 'respond-async');
      sendDocument(res, view.record, 202);
      return;
    }
    if (prefer.waitS !== undefined) {
      res.set('Preference-Applied', `wait=${prefer.waitS}`);
      await o.engine.waitUntil(view.record.id, isTerminal, prefer.waitS * 1000, o.shutdown);
      view = await o.engine.get(owner, view.record.id);
      if (isTerminal(view.record.state)) {
        res.status(200).json({ ...jobDocument(view.record, mountOf(res)), ...resultBody(view) });
        return;
      }
    }
    sendDocument(res, view.record, 202);
  };
