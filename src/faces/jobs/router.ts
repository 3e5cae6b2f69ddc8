import express from 'express';
import { admitted, bodyless, problem } from '../http/problem.js';
import { type Handler, route } from '../http/route.js';
import { deleteJob, jobMethod } from './control.js';
import { createJob } from './create.js';
import { InFlightKeys } from './idempotency.js';
import { openApiFor } from './openapi.js';
import type { JobsOptions } from './options.js';
import { getArtifact, getJob, getResult, listJobs, streamEvents } from './reads.js';
import { inJobWords } from './words.js';

/** A jobs route: refusals as problem documents, the engine's errors in the words of jobs. */
const jobRoute = (handler: Handler): Handler => route(inJobWords(handler));

/**
 * /v1/jobs: the engine's tasks as plain HTTP 202 Accepted jobs (RFC 9110 status monitors), for
 * callers that do not speak A2A. Same owners, same tasks: a job is an A2A task and the other way round.
 * See docs/http-jobs.md. Each route's handler lives in a file of its kind (create, reads, control).
 * @example app.use('/v1', jobsRouter({ engine, admit, audit, extendedSkills, maxBodyBytes, maxJsonDepth, keepAliveMs, shutdown }));
 */
export function jobsRouter(o: JobsOptions): express.Router {
  const router = express.Router();
  // The skills are fixed at start: the document is made once.
  const openapi = JSON.stringify(openApiFor(o.engine.skills, o.extendedSkills));
  router.get('/openapi.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('application/json').send(openapi);
  });
  const jobs = express.Router();
  jobs.use(admitted(o.admit), bodyless(o.maxBodyBytes));
  jobs.post('/', jobRoute(createJob(o, new InFlightKeys())));
  jobs.get('/', jobRoute(listJobs(o)));
  jobs.get('/:id', jobRoute(getJob(o)));
  jobs.get('/:id/result', jobRoute(getResult(o)));
  jobs.get('/:id/artifacts/:artifactId', jobRoute(getArtifact(o)));
  jobs.get('/:id/events', jobRoute(streamEvents(o)));
  jobs.delete('/:id', jobRoute(deleteJob(o)));
  jobs.post('/:target', jobRoute(jobMethod(o)));
  jobs.use((_req, res) =>
    problem(
      res,
      404,
      'No such jobs endpoint: POST /v1/jobs, GET /v1/jobs, GET or DELETE /v1/jobs/{id}, GET /v1/jobs/{id}/result, ' +
        'GET /v1/jobs/{id}/events, POST /v1/jobs/{id}:cancel or {id}:input (see /v1/openapi.json)',
    ),
  );
  router.use('/jobs', jobs);
  return router;
}
