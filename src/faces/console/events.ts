import type { ServerResponse } from 'node:http';
import type { TaskState } from '../../engine/task.js';
import { SseWriter } from '../http/sse.js';

/** How long a burst of changes is gathered into one event. */
const BATCH_MS = 100;
/** Tasks named in one event at most; past it the event says `more` and the page reloads its list. */
const BATCH_TASKS = 100;

export interface ConsoleStreamOptions {
  /**
   * Subscribes to every task's state changes (here, and on other instances of the store); may throw
   * (refused), before anything is sent.
   */
  onStatus: (listener: (taskId: string, state: TaskState) => void) => () => void;
  /** On a task's page: that task's log as it grows (progress and artifacts change no state). */
  follow?: (signal: AbortSignal) => AsyncIterable<unknown>;
  keepAliveMs: number;
  /** Aborted at shutdown: the stream ends, the page reconnects (to the next instance). */
  shutdown: AbortSignal;
}

/**
 * Server-Sent Events that tell the console what to fetch again: `changed` with the tasks whose state
 * changed (`{tasks: [{id, state}], more?}`), and on a task's page `task` when its log grew. Bursts
 * are gathered for {@link BATCH_MS}; a comment `connected` says the stream watches (the page fetches
 * what it shows then, so nothing falls between its first fetch and the stream). Everything is
 * released when the client goes or the server stops.
 */
export function consoleStream(res: ServerResponse, o: ConsoleStreamOptions): void {
  let seq = 0;
  const changed = new Map<string, TaskState>();
  let more = false;
  let taskGrew = false;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (changed.size > 0 || more) {
      seq += 1;
      const tasks = [...changed].map(([id, state]) => ({ id, state }));
      sse.send(more ? { tasks, more } : { tasks }, seq, 'changed');
    }
    if (taskGrew) {
      seq += 1;
      sse.send({}, seq, 'task');
    }
    changed.clear();
    more = false;
    taskGrew = false;
  };
  const soon = () => {
    timer ??= setTimeout(flush, BATCH_MS);
  };
  // Subscribed before the stream opens: a subscription refused (too many streams) throws to the route.
  const unsubscribe = o.onStatus((taskId, state) => {
    if (changed.size < BATCH_TASKS || changed.has(taskId)) changed.set(taskId, state);
    else more = true;
    soon();
  });
  const sse = new SseWriter(res, o.keepAliveMs, { headers: { 'Cache-Control': 'no-store' } });
  const following = new AbortController();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    unsubscribe();
    following.abort();
    clearTimeout(timer);
    o.shutdown.removeEventListener('abort', end);
  };
  const end = () => {
    release();
    sse.end();
  };
  res.once('close', release);
  if (o.shutdown.aborted) {
    end();
    return;
  }
  o.shutdown.addEventListener('abort', end, { once: true });
  if (o.follow) {
    const items = o.follow(following.signal);
    void (async () => {
      try {
        for await (const _ of items) {
          taskGrew = true;
          soon();
        }
      } catch {
        // The task expired or the stream was released: the status events still come.
      }
    })();
  }
  sse.comment('connected');
}
