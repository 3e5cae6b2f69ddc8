import express from 'express';
import type { Engine } from '../../engine/engine.js';
import type { Audit } from '../audit.js';
import { pageStream } from '../browser/changes.js';
import { ownAssets, packageAsset, pageRouter } from '../browser/page-router.js';
import type { FaceOptions } from '../http/admission.js';
import { BodyRefused, isJsonContentType, readJson } from '../http/body.js';
import { admitted, bodyless, bodyProblem, principalOf, problem } from '../http/problem.js';
import { type Handler, Refused, route } from '../http/route.js';
import { sendArtifact } from '../jobs/artifact-download.js';
import { grantOf, operatorsOnly } from './access.js';
import { consoleChanges } from './events.js';
import { CONSOLE_PAGE } from './page.js';
import { parseListQuery } from './query.js';
import { listItem, taskPage } from './views.js';

export const CONSOLE_PATH = '/console';

export interface ConsoleOptions extends FaceOptions {
  engine: Engine;
  /** Every operator action (cancel, deliver again) is audited. */
  audit: Audit;
}

/** The charts' window. */
const HOUR_MS = 3_600_000;

/** A download of the console's API, under `api`: where the API is reached (its req.baseUrl). */
const artifactPath = (api: string, taskId: string, artifactId: string) =>
  `${api}/tasks/${encodeURIComponent(taskId)}/artifacts/${encodeURIComponent(artifactId)}`;

/**
 * The operator console: a page where operators (OPERATORS, or the local user of an anonymous
 * loopback server) see every principal's tasks, filter and page through them, open one (timeline,
 * webhook deliveries), cancel it or deliver a dead letter again, and watch the last hour in charts.
 * The page is static; its script reads the JSON API below with the caller's credentials and renders
 * with textContent. Every API route is admitted, then refused with 403 to anyone but an operator,
 * whose grant the engine decides first and every operator read and action takes.
 * @example
 *   app.use(CONSOLE_PATH, consoleRouter({ engine, admit, audit, maxBodyBytes, maxJsonDepth, keepAliveMs, shutdown }));
 */
export function consoleRouter(o: ConsoleOptions): express.Router {
  const router = pageRouter(CONSOLE_PAGE, {
    ...ownAssets('console', {
      'console.js': 'text/javascript',
      'charts.js': 'text/javascript',
      'console.css': 'text/css',
    }),
    // The minified classic build (~50 KB): it defines the global uPlot the charts module uses.
    'uplot.js': packageAsset('uplot', 'uPlot.iife.min.js', 'text/javascript'),
    'uplot.css': packageAsset('uplot', 'uPlot.min.css', 'text/css'),
  });

  const api = express.Router();
  api.use(admitted(o.admit), bodyless(o.maxBodyBytes), operatorsOnly(o.engine));
  const get = (path: string, handler: Handler) => api.get(path, route(handler));
  const post = (path: string, handler: Handler) =>
    api.post(
      path,
      route(async (req, res) => {
        // A JSON content type (the body is `{}`) makes a browser ask first (CORS
        // preflight) before another site's page can send it: no cross-site request reaches an action.
        const type = req.headers['content-type'];
        if (type === undefined || !isJsonContentType(type))
          throw new Refused(415, 'Send operator actions with Content-Type: application/json');
        try {
          await readJson(req, o); // read within the limits, and not used: the path says it all
        } catch (err) {
          if (!(err instanceof BodyRefused)) throw err;
          bodyProblem(res, err);
          return;
        }
        await handler(req, res);
      }),
    );

  get('/tasks', async (req, res) => {
    const filter = parseListQuery(req.query);
    if ('error' in filter) throw new Refused(400, `The list's ${filter.error}`);
    const page = await o.engine.operatorList(grantOf(res), filter);
    res.json({
      tasks: page.records.map(listItem),
      nextPageToken: page.nextPageToken,
      orderedBy: page.orderedBy,
    });
  });

  get('/counts', async (_req, res) => {
    res.json({ counts: await o.engine.operatorCounts(grantOf(res)) });
  });

  get('/activity', async (_req, res) => {
    res.json(await o.engine.operatorActivity(grantOf(res), HOUR_MS));
  });

  get('/tasks/:id', async (req, res) => {
    const id = String(req.params.id);
    const task = await o.engine.operatorTask(grantOf(res), id);
    res.json(taskPage(task, (artifactId) => artifactPath(req.baseUrl, id, artifactId)));
  });

  get('/tasks/:id/artifacts/:artifactId', async (req, res) => {
    const file = await o.engine.operatorArtifact(
      grantOf(res),
      String(req.params.id),
      String(req.params.artifactId),
    );
    await sendArtifact(req, res, file);
  });

  post('/tasks/:id/cancel', async (req, res) => {
    const grant = grantOf(res);
    const id = String(req.params.id);
    const view = await o.engine.operatorCancel(grant, id);
    o.audit('cancel', principalOf(res), id, {
      grant: 'operator',
      operator: grant.operator,
      owner: view.record.owner,
    });
    res.json({ id, state: view.record.state });
  });

  post('/tasks/:id/deliveries/:webhook/:seq/redeliver', async (req, res) => {
    const grant = grantOf(res);
    const taskId = String(req.params.id);
    const configId = String(req.params.webhook);
    const seqText = String(req.params.seq);
    if (!/^[1-9]\d{0,9}$/.test(seqText))
      throw new Refused(400, 'The event number (seq) must be a positive whole number');
    const seq = Number(seqText);
    const { owner } = await o.engine.operatorRedeliver(grant, { taskId, configId, seq });
    o.audit('push-redeliver', principalOf(res), taskId, {
      grant: 'operator',
      operator: grant.operator,
      owner,
      configId,
      seq,
    });
    res.json({ taskId, webhook: configId, seq, queued: true });
  });

  get('/events', async (req, res) => {
    const grant = grantOf(res);
    const task = typeof req.query.task === 'string' && req.query.task !== '' ? req.query.task : undefined;
    // A task page's stream: 404 before it opens for a task that does not exist.
    if (task !== undefined) await o.engine.operatorTask(grant, task);
    // A task page also hears its log grow (progress and artifacts change no state).
    const follow =
      task === undefined
        ? undefined
        : (signal: AbortSignal) => o.engine.operatorStream(grant, task, { until: 'terminal', signal });
    pageStream(
      res,
      {
        // One of the operator's streams (MAX_STREAMS); a task page's log follow is another.
        onStatus: (listener) => o.engine.watchStatus(`operator:${grant.operator}`, listener),
        keepAliveMs: o.keepAliveMs,
        shutdown: o.shutdown,
      },
      consoleChanges(follow),
    );
  });

  api.use((_req, res) => problem(res, 404, 'No such console endpoint'));
  router.use('/api', api);
  return router;
}
