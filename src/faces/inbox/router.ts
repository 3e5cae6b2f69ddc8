import express from 'express';
import { ownAssets, pageRouter } from '../browser/page-router.js';
import { admitted, bodyless, problem } from '../http/problem.js';
import { route } from '../http/route.js';
import { answer } from './control.js';
import type { InboxOptions } from './options.js';
import { INBOX_PAGE } from './page.js';
import { listWaiting, streamEvents } from './reads.js';

export const INBOX_PATH = '/inbox';

/**
 * The approvals inbox: a page where an approver signs in with the same credentials as the API,
 * sees the tasks waiting for them (their own, or naming them as approver) and answers them; the
 * list follows changes over SSE. Every JSON endpoint goes through admission; the engine decides
 * who may see and answer what (another approver's task does not exist for the caller). Each
 * route's handler lives in a file of its kind (reads, control).
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
  api.get('/waiting', route(listWaiting(o)));
  api.post('/tasks/:id/answer', route(answer(o)));
  api.get('/events', route(streamEvents(o)));
  api.use((_req, res) => problem(res, 404, 'No such inbox endpoint'));
  router.use('/api', api);
  return router;
}
