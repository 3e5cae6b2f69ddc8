import express from 'express';
import { admitted, problem } from '../http/problem.js';
import { workersOnly } from './access.js';
import { claimJobs } from './claims.js';
import { artifact, ask, complete, fail, heartbeat, progress, release, status } from './job-writes.js';
import { workersOpenApi } from './openapi.js';
import type { WorkersOptions } from './options.js';
import { workerRoute } from './respond.js';
import { upload } from './upload.js';

/**
 * /v1/workers: remote workers claim the tasks of remote skills and do their work (docs/workers.md).
 * Only principals WORKERS names may use it (and, on an anonymous loopback server, its local user).
 * Each route's handler lives in a file of its kind: claims, job-writes (the lease holder's writes),
 * upload (an artifact's bytes).
 *
 * @example app.use('/v1/workers', workersRouter({ runs, skills, audit, admit, leaseMs, localWorker, ...bodyAndStreams }));
 */
export function workersRouter(o: WorkersOptions): express.Router {
  const router = express.Router();
  const openapi = JSON.stringify(workersOpenApi(o.runs.skills));
  router.get('/openapi.json', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('application/json').send(openapi);
  });
  router.use(admitted(o.admit), workersOnly(o));
  router.post('/claims', workerRoute(claimJobs(o)));
  const job = '/jobs/:id';
  router.post(`${job}/heartbeat`, workerRoute(heartbeat(o)));
  router.post(`${job}/progress`, workerRoute(progress(o)));
  router.post(`${job}/status`, workerRoute(status(o)));
  router.post(`${job}/artifacts`, workerRoute(artifact(o)));
  router.put(`${job}/artifacts/:artifactId`, workerRoute(upload(o)));
  router.post(`${job}/ask`, workerRoute(ask(o)));
  router.post(`${job}/complete`, workerRoute(complete(o)));
  router.post(`${job}/fail`, workerRoute(fail(o)));
  router.post(`${job}/release`, workerRoute(release(o)));
  router.use((_req, res) =>
    problem(
      res,
      404,
      'No such workers endpoint: POST /v1/workers/claims, POST /v1/workers/jobs/{taskId}/heartbeat|progress|status|artifacts|ask|complete|fail|release, ' +
        'PUT /v1/workers/jobs/{taskId}/artifacts/{artifactId} (see /v1/workers/openapi.json)',
    ),
  );
  return router;
}
