import express from 'express';
import { ownAssets, packageAsset, pageRouter } from '../browser/page-router.js';
import { admitted, bodyless, problem } from '../http/problem.js';
import { route } from '../http/route.js';
import { operatorsOnly } from './access.js';
import { cancelTask, operatorAction, redeliver } from './control.js';
import type { ConsoleOptions } from './options.js';
import { CONSOLE_PAGE } from './page.js';
import { getActivity, getArtifact, getCounts, getTask, listTasks, streamEvents } from './reads.js';

export const CONSOLE_PATH = '/console';

/**
 * The operator console: a page where operators (OPERATORS, or the local user of an anonymous
 * loopback server) see every principal's tasks, filter and page through them, open one (timeline,
 * webhook deliveries), cancel it or deliver a dead letter again, and watch the last hour in charts.
 * The page is static; its script reads the JSON API below with the caller's credentials and renders
 * with textContent. Every API route is admitted, then refused with 403 to anyone but an operator,
 * whose grant the engine decides first and every operator read and action takes. Each route's
 * handler lives in a file of its kind (reads, control).
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
  api.get('/tasks', route(listTasks(o)));
  api.get('/counts', route(getCounts(o)));
  api.get('/activity', route(getActivity(o)));
  api.get('/tasks/:id', route(getTask(o)));
  api.get('/tasks/:id/artifacts/:artifactId', route(getArtifact(o)));
  api.post('/tasks/:id/cancel', route(operatorAction(o, cancelTask(o))));
  api.post('/tasks/:id/deliveries/:webhook/:seq/redeliver', route(operatorAction(o, redeliver(o))));
  api.get('/events', route(streamEvents(o)));
  api.use((_req, res) => problem(res, 404, 'No such console endpoint'));
  router.use('/api', api);
  return router;
}
