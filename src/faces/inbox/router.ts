import express from 'express';
import { z } from 'zod';
import { approverNameOf, ownerKey, type Principal } from '../../auth/principal.js';
import type { Engine } from '../../engine/engine.js';
import { isEngineError } from '../../engine/errors.js';
import type { Part } from '../../engine/task.js';
import { answerTask } from '../answer.js';
import type { Audit } from '../audit.js';
import { pageStream } from '../browser/changes.js';
import { ownAssets, pageRouter } from '../browser/page-router.js';
import type { FaceOptions } from '../http/admission.js';
import { BodyRefused, isJsonContentType, readJson } from '../http/body.js';
import { admitted, bodyless, bodyProblem, principalOf, problem, STATUS_OF } from '../http/problem.js';
import { waitingChanges } from './events.js';
import { INBOX_PAGE } from './page.js';
import { toWaitingItem } from './waiting.js';

export const INBOX_PATH = '/inbox';

export interface InboxOptions extends FaceOptions {
  engine: Engine;
  /** Every answer is audited, as over the API. */
  audit: Audit;
}

/** How many waiting tasks one page lists. */
const LIST_LIMIT = 200;

const Answer = z.union([
  z.strictObject({
    decision: z.enum(['approve', 'reject']),
    comment: z.string().trim().max(2000).optional(),
  }),
  z.strictObject({ text: z.string().trim().min(1).max(10_000) }),
]);

/**
 * The approvals inbox: a page where an approver signs in with the same credentials as the API,
 * sees the tasks waiting for them (their own, or naming them as approver) and answers them; the
 * list follows changes over SSE. Every JSON endpoint goes through admission; the engine decides
 * who may see and answer what (another approver's task does not exist for the caller).
 * @example
 *   app.use(INBOX_PATH, inboxRouter({ engine, admit, audit, maxBodyBytes, maxJsonDepth, keepAliveMs, shutdown }));
 */
export function inboxRouter(o: InboxOptions): express.Router {
  const router = pageRouter(
    INBOX_PAGE,
    ownAssets('inbox', { 'inbox.js': 'text/javascript', 'inbox.css': 'text/css' }),
  );

  const api = express.Router();
  api.use(admitted(o.admit), bodyless(o.maxBodyBytes));
  const waiting = (p: Principal) => o.engine.waitingFor(ownerKey(p), approverNameOf(p), LIST_LIMIT);

  api.get('/waiting', async (_req, res) => {
    const principal = principalOf(res);
    const records = await waiting(principal);
    const now = o.engine.now();
    res.json({
      caller: approverNameOf(principal) ?? 'anonymous',
      tasks: records.map((r) => toWaitingItem(r, principal, now)),
    });
  });

  api.post('/tasks/:id/answer', async (req, res) => {
    const principal = principalOf(res);
    if (!isJsonContentType(req.headers['content-type'])) {
      problem(res, 415, 'Send the answer as application/json');
      return;
    }
    let body: unknown;
    try {
      body = await readJson(req, o);
    } catch (err) {
      if (!(err instanceof BodyRefused)) throw err;
      bodyProblem(res, err);
      return;
    }
    const parsed = Answer.safeParse(body);
    if (!parsed.success) {
      problem(res, 400, 'Send {"decision": "approve"|"reject", "comment"?: string} or {"text": string}');
      return;
    }
    const answer = parsed.data;
    const parts: Part[] =
      'text' in answer
        ? [{ text: answer.text }]
        : [{ data: { decision: answer.decision, ...(answer.comment ? { comment: answer.comment } : {}) } }];
    const id = String(req.params.id);
    try {
      const answered = await answerTask(o.engine, o.audit, principal, id, parts);
      // An approver learns the receipt's state and nothing else of the task.
      res.json({ id, state: answered.grant === 'approver' ? answered.receipt.state : answered.record.state });
    } catch (err) {
      if (!isEngineError(err)) throw err;
      problem(res, STATUS_OF[err.code], err.message);
    }
  });

  api.get('/events', (_req, res) => {
    const principal = principalOf(res);
    try {
      const snapshot = async () => (await waiting(principal)).map((r) => `${r.id}@${r.updatedAt}`).join(',');
      pageStream(
        res,
        {
          // One of the caller's streams (MAX_STREAMS): each looks at the store again on changes.
          onStatus: (listener) => o.engine.watchStatus(ownerKey(principal), listener),
          keepAliveMs: o.keepAliveMs,
          shutdown: o.shutdown,
          lookAtKeepAlive: true,
        },
        waitingChanges(snapshot),
      );
    } catch (err) {
      if (!isEngineError(err)) throw err;
      problem(res, STATUS_OF[err.code], err.message);
    }
  });

  api.use((_req, res) => problem(res, 404, 'No such inbox endpoint'));
  router.use('/api', api);
  return router;
}
