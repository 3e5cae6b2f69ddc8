import type { ServerResponse } from 'node:http';
import { SseWriter } from '../http/sse.js';

/** How long a burst of state changes is gathered into one look at the caller's list. */
const DEBOUNCE_MS = 100;

export interface ChangeStreamOptions {
  /** Subscribes to every task's state changes; returns the unsubscribe. May throw (refused), before anything is sent. */
  onStatus: (listener: () => void) => () => void;
  /**
   * A key of what the caller sees now (its waiting tasks and their times): an event is sent only
   * when it differs, so that no caller learns of other callers' tasks changing.
   */
  snapshot: () => Promise<string>;
  keepAliveMs: number;
  /** Aborted at shutdown: the stream ends, the client reconnects to the next instance. */
  shutdown: AbortSignal;
}

/**
 * Server-Sent Events that tell the inbox page to refetch its list: `event: changed` (with an id and
 * the new count as data) whenever the caller's waiting tasks change, and a keep-alive comment every
 * `keepAliveMs`, at which the list is also looked at again (changes made by another instance).
 * Everything is released when the client goes or the server stops.
 */
export function changeStream(res: ServerResponse, o: ChangeStreamOptions): void {
  let seq = 0;
  let last: string | undefined;
  let pending: NodeJS.Timeout | undefined;
  let checking = false;
  const nudge = () => {
    pending ??= setTimeout(check, DEBOUNCE_MS);
  };
  const check = async () => {
    pending = undefined;
    if (sse.closed || checking) return;
    checking = true;
    try {
      const now = await o.snapshot();
      if (last !== undefined && now !== last) {
        seq += 1;
        sse.send({ at: Date.now() }, seq, 'changed');
      }
      last = now;
    } catch {
      // The store is busy or closing: the next change or keep-alive looks again.
    } finally {
      checking = false;
    }
  };
  // Subscribed before the stream opens: a subscription refused (too many streams) throws to the route.
  const unsubscribe = o.onStatus(nudge);
  // Each keep-alive also looks at the list again: changes made by another instance are heard so.
  const sse = new SseWriter(res, o.keepAliveMs, {
    headers: { 'Cache-Control': 'no-store' },
    onKeepAlive: nudge,
  });
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    unsubscribe();
    clearTimeout(pending);
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
  // The first look only sets the baseline (the page fetches its list itself once connected).
  void check().then(() => sse.comment('connected'));
}
