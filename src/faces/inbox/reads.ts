import { approverNameOf, ownerKey, type Principal } from '../../auth/principal.js';
import { pageStream } from '../browser/changes.js';
import { principalOf } from '../http/problem.js';
import type { Handler } from '../http/route.js';
import { waitingChanges } from './events.js';
import type { InboxOptions } from './options.js';
import { toWaitingItem } from './waiting.js';

/** How many waiting tasks one page lists. */
const LIST_LIMIT = 200;

/** The tasks waiting for `p`: its own, and those naming it as approver. */
const waitingFor = (o: InboxOptions, p: Principal) =>
  o.engine.waitingFor(ownerKey(p), approverNameOf(p), LIST_LIMIT);

/** `GET /api/waiting`: who the caller is, and the tasks waiting for them. */
export const listWaiting =
  (o: InboxOptions): Handler =>
  async (_req, res) => {
    const principal = principalOf(res);
    const records = await waitingFor(o, principal);
    const now = o.engine.now();
    res.json({
      caller: approverNameOf(principal) ?? 'anonymous',
      tasks: records.map((r) => toWaitingItem(r, principal, now)),
    });
  };

/** `GET /api/events`: the page's stream, `changed` whenever the caller's waiting tasks change. */
export const streamEvents =
  (o: InboxOptions): Handler =>
  async (_req, res) => {
    const principal = principalOf(res);
    const snapshot = async () =>
      (await waitingFor(o, principal)).map((r) => `${r.id}@${r.updatedAt}`).join(',');
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
  };
