import { pageStream } from '../browser/changes.js';
import { type Handler, Refused } from '../http/route.js';
import { sendArtifact } from '../jobs/artifact-download.js';
import { grantOf } from './access.js';
import { consoleChanges } from './events.js';
import type { ConsoleOptions } from './options.js';
import { parseListQuery } from './query.js';
import { listItem, taskPage } from './views.js';

/** The charts' window. */
const HOUR_MS = 3_600_000;

/** A download of the console's API, under `api`: where the API is reached (its req.baseUrl). */
const artifactPath = (api: string, taskId: string, artifactId: string) =>
  `${api}/tasks/${encodeURIComponent(taskId)}/artifacts/${encodeURIComponent(artifactId)}`;

/** `GET /api/tasks`: every principal's tasks, filtered and paged (query.ts reads the filter). */
export const listTasks =
  (o: ConsoleOptions): Handler =>
  async (req, res) => {
    const filter = parseListQuery(req.query);
    if ('error' in filter) throw new Refused(400, `The list's ${filter.error}`);
    const page = await o.engine.operatorList(grantOf(res), filter);
    res.json({
      tasks: page.records.map(listItem),
      nextPageToken: page.nextPageToken,
      orderedBy: page.orderedBy,
    });
  };

/** `GET /api/counts`: the tasks in each state. */
export const getCounts =
  (o: ConsoleOptions): Handler =>
  async (_req, res) => {
    res.json({ counts: await o.engine.operatorCounts(grantOf(res)) });
  };

/** `GET /api/activity`: the last hour, for the charts. */
export const getActivity =
  (o: ConsoleOptions): Handler =>
  async (_req, res) => {
    res.json(await o.engine.operatorActivity(grantOf(res), HOUR_MS));
  };

/** `GET /api/tasks/:id`: one task's page (timeline, webhook deliveries, artifacts to download). */
export const getTask =
  (o: ConsoleOptions): Handler =>
  async (req, res) => {
    const id = String(req.params.id);
    const task = await o.engine.operatorTask(grantOf(res), id);
    res.json(taskPage(task, (artifactId) => artifactPath(req.baseUrl, id, artifactId)));
  };

/** `GET /api/tasks/:id/artifacts/:artifactId`: the artifact's bytes. */
export const getArtifact =
  (o: ConsoleOptions): Handler =>
  async (req, res) => {
    const file = await o.engine.operatorArtifact(
      grantOf(res),
      String(req.params.id),
      String(req.params.artifactId),
    );
    await sendArtifact(req, res, file);
  };

/** `GET /api/events[?task=id]`: the page's stream of changes (with `task`, that task's log too). */
export const streamEvents =
  (o: ConsoleOptions): Handler =>
  async (req, res) => {
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
  };
