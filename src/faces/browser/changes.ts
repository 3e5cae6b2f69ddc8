import type { ServerResponse } from 'node:http';
import type { TaskState } from '../../engine/task.js';
import { SseWriter } from '../http/sse.js';

/** How long a burst of changes is gathered before the page is told of it. */
const BURST_MS = 100;

/** An event for the page: its type and data (the stream numbers it). */
export type PageEvent = readonly [event: string, data: unknown];

/** What one page's stream makes of the changes it hears: each page says it its own way. */
export interface PageChanges {
  /** A task's state changed (any task the watch hears of: what it means to the page is the page's). */
  heard?(taskId: string, state: TaskState): void;
  /**
   * A burst ended (and, once, before the stream says `connected`): what to tell the page now, if
   * anything. A throw tells nothing: the next change or keep-alive looks again.
   */
  look(): PageEvent[] | Promise<PageEvent[]>;
}

export interface PageStreamOptions {
  /**
   * Subscribes to every task's state changes (here, and on other instances of the store); may throw
   * (refused: too many streams), before anything is sent.
   */
  onStatus: (listener: (taskId: string, state: TaskState) => void) => () => void;
  keepAliveMs: number;
  /** Aborted at shutdown: the stream ends, the page reconnects (to the next instance). */
  shutdown: AbortSignal;
  /** Each keep-alive is a burst too: a page whose view is looked up in the store hears so of other instances. */
  lookAtKeepAlive?: boolean;
}

/**
 * The Server-Sent Events that tell a browser page (the console, the inbox) what to fetch again.
 * `changes` is made once the stream opens, with `nudge` (something changed: a burst begins, or goes
 * on) and `signal` (aborted when the stream is released). State changes are gathered for
 * {@link BURST_MS}, then `look` says what to send, one look at a time; a comment `connected` comes
 * after the first look (the page fetches what it shows then, so nothing falls between its first
 * fetch and the stream). Everything is released when the client goes or the server stops.
 */
export function pageStream(
  res: ServerResponse,
  o: PageStreamOptions,
  changes: (nudge: () => void, signal: AbortSignal) => PageChanges,
): void {
  let seq = 0;
  let made: PageChanges | undefined;
  let timer: NodeJS.Timeout | undefined;
  let looking = false;
  let again = false;
  const nudge = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      void look();
    }, BURST_MS);
  };
  const look = async () => {
    if (sse.closed || made === undefined) return;
    // A burst that ends while the last look is still out is looked at once that one is done.
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    try {
      for (const [event, data] of await made.look()) {
        seq += 1;
        sse.send(data, seq, event);
      }
    } catch {
      // The store is busy or closing: the next change or keep-alive looks again.
    } finally {
      looking = false;
    }
    if (again) {
      again = false;
      nudge();
    }
  };
  // Subscribed before the stream opens: a subscription refused (too many streams) throws to the route.
  const unsubscribe = o.onStatus((taskId, state) => {
    made?.heard?.(taskId, state);
    nudge();
  });
  const sse = new SseWriter(res, o.keepAliveMs, {
    headers: { 'Cache-Control': 'no-store' },
    ...(o.lookAtKeepAlive ? { onKeepAlive: nudge } : {}),
  });
  const released = new AbortController();
  const release = () => {
    if (released.signal.aborted) return;
    released.abort();
    unsubscribe();
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
  made = changes(nudge, released.signal);
  void look().then(() => sse.comment('connected'));
}
