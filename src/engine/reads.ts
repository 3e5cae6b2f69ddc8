import {
  type ArtifactFile,
  artifactFile as fileOf,
  withContent as readContent,
  storedApart,
} from './artifact-reader.js';
import { foldArtifacts } from './artifacts.js';
import { type EngineContext, notFound, storeRefusals } from './context.js';
import { EngineError, isEngineError } from './errors.js';
import type { LoggedEvent } from './events.js';
import { LIST_PAGE_BYTES, viewBytes } from './limits.js';
import { AHEAD_COUNT_CAP, stampWithStanding, withCounts, withStanding } from './queue.js';
import type { ListPage } from './store-port.js';
import { isTerminal, type QueueStanding, type TaskRecord, type TaskState, type TaskView } from './task.js';
import { foldView } from './view.js';

export interface ListOptions {
  contextId?: string;
  state?: TaskState;
  statusAfter?: number;
  pageSize: number;
  pageToken?: string;
  /** Messages of each task's history to show (the newest); 0 reads no logs at all. */
  historyLength?: number;
  withArtifacts: boolean;
}

/** The caller's task record alone (one indexed read, no log): its state, handle and owner's data. */
export async function record(core: EngineContext, owner: string, id: string): Promise<TaskRecord> {
  const { store, now } = core.journal;
  const found = await store.getTask(id, now());
  if (!found || found.owner !== owner) throw notFound(id);
  return withStanding(core, found);
}

/** The caller's task as a view (record, history, artifacts). */
export async function get(
  core: EngineContext,
  owner: string,
  id: string,
  historyLength?: number,
): Promise<TaskView> {
  const { store, now } = core.journal;
  // Ownership is part of the read: another owner's task costs and answers what a missing id does.
  const found = await store.getTaskWithLog(id, now(), owner);
  if (!found) throw notFound(id);
  return foldView(await withStanding(core, found.record), found.log, historyLength, core.artifactUrl);
}

/**
 * The caller's task as a view while it has not ended; an ended one is refused (a stream of it has
 * nothing to wait for) before its log is read: a log of thousands of events costs its refusal nothing.
 */
export async function activeView(core: EngineContext, owner: string, id: string): Promise<TaskView> {
  const { store, now } = core.journal;
  const found = await store.getTaskWithLog(id, now(), owner, true);
  if (!found) throw notFound(id);
  const { state } = found.record;
  if (isTerminal(state))
    throw new EngineError('unsupported-operation', `Task ${id} is ${state}; nothing to stream`);
  return foldView(await withStanding(core, found.record), found.log, undefined, core.artifactUrl);
}

/** A key that changes whenever the task's view may have changed (see {@link viewVersion}). */
export async function version(core: EngineContext, owner: string, id: string): Promise<string> {
  // A queued task's standing changes as others run: its version says where it stands too.
  const stamp = await stampWithStanding(core, owner, id);
  if (!stamp || stamp.owner !== owner) throw notFound(id);
  return viewVersion(stamp);
}

/** See {@link version}. */
export const viewVersion = (r: {
  lastSeq: number;
  updatedAt: number;
  queue?: QueueStanding;
  pollIntervalMs?: number;
}): string =>
  r.queue
    ? `${r.lastSeq}:${r.updatedAt}:${r.queue.ahead}:${r.queue.reason}:${r.pollIntervalMs}`
    : `${r.lastSeq}:${r.updatedAt}`;

/** A page of the caller's tasks, newest first; pages past LIST_PAGE_BYTES of histories end early. */
export async function list(
  core: EngineContext,
  owner: string,
  o: ListOptions,
): Promise<{ views: TaskView[]; page: ListPage }> {
  const { store, now } = core.journal;
  const filter = {
    owner,
    contextId: o.contextId,
    state: o.state,
    statusAfter: o.statusAfter,
    pageToken: o.pageToken,
    now: now(),
  };
  // The page's queued tasks are counted once for the page, in its own read, not one read each.
  const page = await storeRefusals(
    store.listTasks({ ...filter, pageSize: o.pageSize, queueCap: AHEAD_COUNT_CAP }),
  );
  // Kept as they are shown: a view read below, or a poll right after, counts nothing again.
  const records = page.records.map((r) => withCounts(core, r, page.queued?.get(r.id), filter.now));
  const needLog = o.withArtifacts || o.historyLength !== 0;
  if (!needLog) {
    return {
      views: records.map((r) => ({ record: r, artifacts: [], history: [] })),
      page: { ...page, records },
    };
  }
  const views: TaskView[] = [];
  let bytes = 0;
  for (const r of page.records) {
    const view = await get(core, owner, r.id, o.historyLength).catch((err: unknown) => {
      // Expired since the page was read: left out. Any other failure is the caller's error.
      if (isEngineError(err) && err.code === 'task-not-found') return undefined;
      throw err;
    });
    if (!view) continue;
    const shown = o.withArtifacts ? view : { ...view, artifacts: [] };
    views.push(shown);
    bytes += viewBytes(shown);
    // A page of many large histories stops short: the next page has the rest.
    if (bytes > LIST_PAGE_BYTES && views.length < page.records.length) {
      const shorter = await store.listTasks({ ...filter, pageSize: views.length });
      return { views, page: { ...shorter, records: views.map((v) => v.record) } };
    }
  }
  return { views, page: { ...page, records } };
}

/** One of the caller's artifacts as a file, read from the store a piece at a time. */
export async function artifactFile(
  core: EngineContext,
  owner: string,
  id: string,
  artifactId: string,
): Promise<ArtifactFile> {
  const { store, now } = core.journal;
  const found = await store.getTaskWithLog(id, now(), owner);
  if (!found) throw notFound(id);
  const artifact = foldArtifacts(found.log).get(artifactId);
  if (!artifact) throw new EngineError('task-not-found', `Task ${id} has no artifact ${artifactId}`);
  return fileOf(store, id, artifact);
}

/** Stream entries with their content read back, shared by every subscriber of the task. */
const contents = new WeakMap<LoggedEvent, Promise<LoggedEvent>>();

/**
 * A stream entry as the skill wrote it: the content of an artifact chunk stored out of the log is
 * read back (once per entry, however many subscribers stream it: the hub hands each of them the
 * same entry object).
 */
export function withContent(core: EngineContext, entry: LoggedEvent): LoggedEvent | Promise<LoggedEvent> {
  // Most entries: no read, no promise (a transition seen by ten thousand streams).
  if (!storedApart(entry)) return entry;
  let read = contents.get(entry);
  if (!read) {
    read = readContent(core.journal.store, entry, (artifactId) => core.artifactUrl(entry.taskId, artifactId));
    contents.set(entry, read);
  }
  return read;
}

/** Tasks waiting for an answer from this caller: its own, or those naming it as approver. */
export function waitingFor(
  core: EngineContext,
  owner: string,
  approverName: string | undefined,
  limit: number,
): Promise<TaskRecord[]> {
  const { store, now } = core.journal;
  return store.listWaiting(owner, approverName, now(), limit);
}
