import { MAX_POLL_WAIT_MS } from '../../engine/generation.js';
import { isTerminal } from '../../engine/task.js';
import { callerGone } from '../http/caller-gone.js';
import { principalOf } from '../http/problem.js';
import { type Handler, Refused } from '../http/route.js';
import { sendArtifact } from './artifact-download.js';
import { ifNoneMatchOf, setEtag } from './conditions.js';
import { jobDocument, jobPath, mountOf, resultBody, resultPath } from './document.js';
import { jobEvents } from './events.js';
import type { JobsOptions } from './options.js';
import { parsePrefer } from './prefer.js';
import { ownerOf, sendDocument } from './respond.js';
import { singleFile } from './result.js';

const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 100;

/** `GET /v1/jobs`: the caller's jobs, most recently updated first. */
export const listJobs =
  (o: JobsOptions): Handler =>
  async (req, res) => {
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
    res.json({
      jobs: views.map((v) => jobDocument(v.record, mountOf(res))),
      nextPageToken: page.nextPageToken,
    });
  };

/**
 * `GET /v1/jobs/{id}`: the job document; `?follow=result` redirects a completed job to its result.
 * With `If-None-Match` naming the job's ETag: 304 Not Modified, at once, or (a long poll, with
 * `Prefer: wait=N`) once N s (at most 30) pass with no change; a change before that answers the
 * document at once.
 */
export const getJob =
  (o: JobsOptions): Handler =>
  async (req, res) => {
    const owner = ownerOf(res);
    const id = String(req.params.id);
    let record = await o.engine.record(owner, id);
    const seen = ifNoneMatchOf(req);
    if (seen !== undefined && record.lastSeq === seen) {
      const { waitS } = parsePrefer(req.headers.prefer);
      if (waitS !== undefined && waitS > 0) {
        const waitMs = Math.min(waitS * 1000, MAX_POLL_WAIT_MS);
        res.set('Preference-Applied', `wait=${waitMs / 1000}`);
        const now = await o.engine.awaitGeneration(owner, id, seen, waitMs, callerGone(res, o.shutdown));
        if (now !== seen) record = await o.engine.record(owner, id);
      }
      if (record.lastSeq === seen) {
        setEtag(res, record);
        res.status(304).end();
        return;
      }
    }
    if (req.query.follow === 'result' && record.state === 'completed') {
      res.redirect(303, resultPath(record.id, mountOf(res)));
      return;
    }
    sendDocument(res, record);
  };

/** `GET /v1/jobs/{id}/result`: 202 while running, 409 when it ended without one, the result (or its file). */
export const getResult =
  (o: JobsOptions): Handler =>
  async (req, res) => {
    const r = await o.engine.record(ownerOf(res), String(req.params.id));
    if (!isTerminal(r.state)) {
      res.set('Location', jobPath(r.id, mountOf(res)));
      sendDocument(res, r, 202);
      return;
    }
    if (r.state !== 'completed') {
      const doc = jobDocument(r);
      throw new Refused(
        409,
        `Job ${r.id} is ${doc.status}${doc.statusMessage ? `: ${doc.statusMessage}` : ''}; it has no result`,
        { jobStatus: doc.status, state: r.state, job: jobPath(r.id, mountOf(res)) },
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
  };

/** `GET /v1/jobs/{id}/artifacts/{artifactId}`: the file, streamed from the store (every face links large ones here). */
export const getArtifact =
  (o: JobsOptions): Handler =>
  async (req, res) => {
    const file = await o.engine.artifactFile(
      ownerOf(res),
      String(req.params.id),
      String(req.params.artifactId),
    );
    await sendArtifact(req, res, file);
  };

/** `GET /v1/jobs/{id}/events`: SSE of the job's log, resumable with Last-Event-ID. */
export const streamEvents =
  (o: JobsOptions): Handler =>
  async (req, res) => {
    const owner = ownerOf(res);
    const id = String(req.params.id);
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
  };
