import { randomUUID } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import { ownerKey, sendPolicyOf } from '../../auth/principal.js';
import type { Engine } from '../../engine/engine.js';
import { isEngineError } from '../../engine/errors.js';
import { isTerminal, type Part, type TaskRecord, type TaskView } from '../../engine/task.js';
import type { Audit } from '../audit.js';
import type { FaceOptions } from '../http/admission.js';
import { BodyRefused, isJsonContentType, readJson } from '../http/body.js';
import { admitted, bodyless, principalOf, problem, STATUS_OF } from '../http/problem.js';
import { STATE_NAMES } from '../states.js';
import { sendArtifact } from './artifact-download.js';
import { jobDocument, jobPath, resultBody, resultPath, retryAfterS } from './document.js';
import { jobEvents } from './events.js';
import { IDEMPOTENCY_METADATA, InFlightKeys, KEY_PATTERN, messageIdOf, payloadHash } from './idempotency.js';
import { OPENAPI } from './openapi.js';
import { parsePrefer } from './prefer.js';
import { singleFile } from './result.js';

export interface JobsOptions extends FaceOptions {
  engine: Engine;
  audit: Audit;
}

const NewJob = z.strictObject({ skill: z.string().min(1).max(200), input: z.unknown().optional() });
const Answer = z.union([z.strictObject({ text: z.string().min(1) }), z.strictObject({ data: z.unknown() })]);
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/** A request refused with a problem document (thrown inside handlers, answered by `route`). */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * /v1/jobs: the engine's tasks as plain HTTP 202 Accepted jobs (RFC 9110 status monitors), for
 * callers that do not speak A2A. Same owners, same tasks: a job is an A2A task and the other way round.
 * See docs/http-jobs.md.
 * @example app.use('/v1', jobsRouter({ engine, admit, audit, maxBodyBytes, maxJsonDepth, keepAliveMs, shutdown }));
 */
export function jobsRouter(o: JobsOptions): express.Router {
  const router = express.Router();
  const inFlight = new InFlightKeys();
  router.get('/openapi.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(OPENAPI);
  });

  const jobs = express.Router();
  jobs.use(admitted(o.admit), bodyless(o.maxBodyBytes));
  const ownerOf = (res: Response): string => ownerKey(principalOf(res));
  /** Wraps a handler: engine errors and refusals become problem documents. */
  const route =
    (handler: (req: Request, res: Response) => Promise<void>) =>
    async (req: Request, res: Response): Promise<void> => {
      try {
        await handler(req, res);
      } catch (err) {
        if (err instanceof Refused) problem(res, err.status, err.message, err.extra);
        else if (isEngineError(err)) problem(res, STATUS_OF[err.code], err.message);
        else throw err;
      }
    };
  const body = async (req: Request): Promise<unknown> => {
    if (!isJsonContentType(req.headers['content-type'])) throw new Refused(415, 'Send application/json');
    try {
      return await readJson(req, o);
    } catch (err) {
      if (err instanceof BodyRefused) throw new Refused(err.status, err.message);
      throw err;
    }
  };
  // The document is the record's alone: a poll never reads the task's log.
  const sendDocument = (res: Response, r: TaskRecord, status = 200): void => {
    if (!isTerminal(r.state)) res.set('Retry-After', retryAfterS(r));
    res.status(status).json(jobDocument(r));
  };

  jobs.post(
    '/',
    route(async (req, res) => {
      const principal = principalOf(res);
      const owner = ownerOf(res);
      const parsed = NewJob.safeParse(await body(req));
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new Refused(
          400,
          `Send {"skill": string, "input": object}: ${issue?.path.join('.') || 'body'}: ${issue?.message}`,
        );
      }
      const payload = parsed.data;
      const key = req.get('Idempotency-Key');
      if (key !== undefined && !KEY_PATTERN.test(key))
        throw new Refused(400, 'Idempotency-Key: 1 to 255 visible ASCII characters');
      const hash = payloadHash(payload);
      if (key !== undefined && !inFlight.take(owner, key)) {
        throw new Refused(
          409,
          `A request with Idempotency-Key "${key}" is still being answered; retry later`,
        );
      }
      let view: TaskView;
      try {
        const result = await o.engine.send(
          owner,
          {
            messageId: key === undefined ? randomUUID() : messageIdOf(key),
            role: 'ROLE_USER',
            parts: [{ data: { skill: payload.skill, input: payload.input ?? {} } }],
          },
          key === undefined ? undefined : { [IDEMPOTENCY_METADATA]: { payloadHash: hash } },
          undefined,
          sendPolicyOf(principal),
        );
        if (result.kind !== 'task')
          throw new Refused(422, `Skill "${payload.skill}" answers directly; use A2A for it`);
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
      res.set('Location', jobPath(view.record.id));
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
          res.status(200).json({ ...jobDocument(view.record), ...resultBody(view) });
          return;
        }
      }
      sendDocument(res, view.record, 202);
    }),
  );

  jobs.get(
    '/',
    route(async (req, res) => {
      const pageSize = req.query.pageSize === undefined ? DEFAULT_PAGE_SIZE : Number(req.query.pageSize);
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
        throw new Refused(400, `pageSize must be an integer between 1 and ${MAX_PAGE_SIZE}`);
      }
      const pageToken = typeof req.query.pageToken === 'string' ? req.query.pageToken : undefined;
      // Anonymous callers share one owner: listing would let each see the others' jobs.
      if (principalOf(res).via === 'anonymous') {
        res.json({ jobs: [], nextPageToken: '' });
        return;
      }
      const { views, page } = await o.engine.list(ownerOf(res), {
        pageSize,
        pageToken: pageToken || undefined,
        historyLength: 0,
        withArtifacts: false,
      });
      res.json({ jobs: views.map((v) => jobDocument(v.record)), nextPageToken: page.nextPageToken });
    }),
  );

  jobs.get(
    '/:id',
    route(async (req, res) => {
      const record = await o.engine.record(ownerOf(res), String(req.params.id));
      if (req.query.follow === 'result' && record.state === 'completed') {
        res.redirect(303, resultPath(record.id));
        return;
      }
      sendDocument(res, record);
    }),
  );

  jobs.get(
    '/:id/result',
    route(async (req, res) => {
      const r = await o.engine.record(ownerOf(res), String(req.params.id));
      if (!isTerminal(r.state)) {
        res.set('Location', jobPath(r.id));
        sendDocument(res, r, 202);
        return;
      }
      if (r.state !== 'completed') {
        const doc = jobDocument(r);
        throw new Refused(
          409,
          `Job ${r.id} is ${doc.status}${doc.statusMessage ? `: ${doc.statusMessage}` : ''}; it has no result`,
          {
            jobStatus: doc.status,
            state: r.state,
            job: jobPath(r.id),
          },
        );
      }
      const view = await o.engine.get(ownerOf(res), r.id, 0);
      if (req.query.download === '1') {
        const artifactId = singleFile(view);
        if (!artifactId) throw new Refused(406, 'This result is not a single file; read it as JSON');
        await sendArtifact(req, res, await o.engine.artifactFile(ownerOf(res), r.id, artifactId));
        return;
      }
      res.json(resultBody(view));
    }),
  );

  // An artifact as a file, streamed from the store (large ones are linked here from every face).
  jobs.get(
    '/:id/artifacts/:artifactId',
    route(async (req, res) => {
      const file = await o.engine.artifactFile(
        ownerOf(res),
        String(req.params.id),
        String(req.params.artifactId),
      );
      await sendArtifact(req, res, file);
    }),
  );

  jobs.get(
    '/:id/events',
    route(async (req, res) => {
      const owner = ownerOf(res);
      const id = String(req.params.id);
      await o.engine.record(owner, id); // 404 before the stream opens
      const last = req.get('Last-Event-ID');
      const afterSeq = last !== undefined && /^\d+$/.test(last.trim()) ? Number(last) : undefined;
      await jobEvents(res, {
        engine: o.engine,
        owner,
        id,
        afterSeq,
        keepAliveMs: o.keepAliveMs,
        shutdown: o.shutdown,
      });
    }),
  );

  const cancel = async (res: Response, id: string, method: 'post' | 'delete'): Promise<void> => {
    const owner = ownerOf(res);
    const current = await o.engine.record(owner, id);
    if (isTerminal(current.state)) {
      // DELETE asks for the job to stop: a finished one already has; POST :cancel says it is too late.
      if (method === 'delete') {
        sendDocument(res, current);
        return;
      }
      throw new Refused(409, `Job ${id} is ${jobDocument(current).status} and cannot be cancelled`);
    }
    const view = await o.engine.cancel(owner, id);
    o.audit('cancel', principalOf(res), id);
    sendDocument(res, view.record);
  };

  jobs.delete(
    '/:id',
    route(async (req, res) => cancel(res, String(req.params.id), 'delete')),
  );

  // `{id}:cancel` and `{id}:input` (AIP-136 custom methods): one path segment, split at its last colon.
  jobs.post(
    '/:target',
    route(async (req, res) => {
      const target = String(req.params.target);
      const at = target.lastIndexOf(':');
      const id = target.slice(0, at);
      const verb = at < 0 ? '' : target.slice(at + 1);
      if (verb === 'cancel') return cancel(res, id, 'post');
      if (verb !== 'input') throw new Refused(404, 'No such job method: use {id}:cancel or {id}:input');
      const parsed = Answer.safeParse(await body(req));
      if (!parsed.success) throw new Refused(400, 'Send {"text": string} or {"data": ...}');
      const owner = ownerOf(res);
      const principal = principalOf(res);
      const policy = sendPolicyOf(principal);
      // The owner is told why a job takes no input; to anyone else, the engine answers (an approver's
      // grant, or not found).
      const current = await o.engine.record(owner, id).catch((err: unknown) => {
        if (isEngineError(err) && err.code === 'task-not-found') return undefined;
        throw err; // a store failure is the caller's 500, not a "not yours"
      });
      if (current && jobDocument(current).status !== 'input_required') {
        throw new Refused(409, `Job ${id} is ${jobDocument(current).status}; it waits for no input`);
      }
      const part: Part = 'text' in parsed.data ? { text: parsed.data.text } : { data: parsed.data.data };
      const result = await o.engine.send(
        owner,
        { messageId: randomUUID(), role: 'ROLE_USER', taskId: id, parts: [part] },
        undefined,
        undefined,
        policy,
      );
      // An approver (not the owner) gets the receipt only: the job itself is not theirs to read.
      if (result.kind === 'answered') {
        const { receipt } = result;
        o.audit('input', principal, id, { grant: 'approver', approver: receipt.answeredBy });
        res.json({ taskId: id, status: STATE_NAMES[receipt.state].jobs });
        return;
      }
      if (result.kind !== 'task') throw new Error('an answer to a task returned a message');
      o.audit('input', principal, id, { grant: 'owner' });
      sendDocument(res, result.view.record);
    }),
  );

  jobs.use((_req, res) => problem(res, 404, 'No such jobs endpoint'));
  router.use('/jobs', jobs);
  return router;
}
