import type { ActivityTask, RecentActivity } from './operator-port.js';
import { isTerminal, type TaskState } from './task.js';

const MINUTE = 60_000;

/** The last hour (or `windowMs`), a value per minute, as the console's charts draw it. */
export interface ActivitySeries {
  /** The end of each minute, in epoch seconds (uPlot's x axis), oldest first. */
  minutes: number[];
  /** Tasks that ended in each minute, by outcome. */
  finished: Record<'completed' | 'failed' | 'canceled' | 'rejected', number[]>;
  /** Tasks queued (submitted, not yet taken by a runner) at the end of each minute. */
  queued: number[];
  /** Run time (first taken by a runner to end, ms) of the tasks that ended in each minute. */
  duration: { p50: (number | null)[]; p90: (number | null)[]; p99: (number | null)[] };
  /** Webhook delivery attempts per minute that delivered, and that failed (to be retried or dead). */
  push: { delivered: number[]; failed: number[]; successRate: (number | null)[] };
  /** The tasks read were capped: the oldest minutes may miss some. */
  partial: boolean;
}

/** Tasks read at most to draw the charts: the rest of the hour, if any, is left out (and said so). */
export const ACTIVITY_TASKS = 20_000;

/**
 * The charts' series from the store's rows: tasks touched in the window (with when each was first
 * taken by a runner) and the attempts per minute. Queue depth at a minute is the tasks created by
 * then and not yet taken (or ended without being taken).
 */
export function summarize(activity: RecentActivity, now: number, windowMs: number): ActivitySeries {
  const first = Math.floor((now - windowMs) / MINUTE) + 1;
  const last = Math.floor(now / MINUTE);
  const n = last - first + 1;
  const zeros = () => new Array<number>(n).fill(0);
  const slot = (at: number) => Math.floor(at / MINUTE) - first;
  const finished = { completed: zeros(), failed: zeros(), canceled: zeros(), rejected: zeros() };
  const durations: number[][] = Array.from({ length: n }, () => []);
  const queued = zeros();
  for (const t of activity.tasks) {
    if (isTerminal(t.state)) {
      const i = slot(t.updatedAt);
      if (i >= 0 && i < n) {
        finished[t.state as keyof typeof finished][i] =
          (finished[t.state as keyof typeof finished][i] ?? 0) + 1;
        durations[i]?.push(t.updatedAt - (t.startedAt ?? t.createdAt));
      }
    }
    for (const [from, until] of queuedSpans(t)) {
      // Counted at the end of every minute the span covers.
      for (let i = Math.max(0, slot(from)); i < n; i++) {
        const end = (first + i + 1) * MINUTE;
        if (end <= from) continue;
        if (end > until) break;
        queued[i] = (queued[i] ?? 0) + 1;
      }
    }
  }
  const delivered = zeros();
  const failed = zeros();
  for (const a of activity.attempts) {
    const i = a.minute - first;
    if (i < 0 || i >= n) continue;
    const into = a.outcome === 'delivered' ? delivered : failed;
    into[i] = (into[i] ?? 0) + a.count;
  }
  const pct = (p: number) => durations.map((d) => percentile(d, p));
  return {
    minutes: Array.from({ length: n }, (_, i) => ((first + i + 1) * MINUTE) / 1000),
    finished,
    queued,
    duration: { p50: pct(0.5), p90: pct(0.9), p99: pct(0.99) },
    push: {
      delivered,
      failed,
      successRate: delivered.map((d, i) => {
        const all = d + (failed[i] ?? 0);
        return all === 0 ? null : Math.round((1000 * d) / all) / 10;
      }),
    },
    partial: activity.tasks.length >= ACTIVITY_TASKS,
  };
}

/** When the task waited in the queue: from its creation until a runner took it (or it ended). */
function queuedSpans(t: ActivityTask): [number, number][] {
  const endOf = (state: TaskState) => (state === 'submitted' ? Number.POSITIVE_INFINITY : t.updatedAt);
  if (t.startedAt === undefined) return [[t.createdAt, endOf(t.state)]];
  // Taken once, and queued again (an answer to its question) if it is queued now.
  const spans: [number, number][] = [[t.createdAt, t.startedAt]];
  if (t.state === 'submitted') spans.push([t.updatedAt, Number.POSITIVE_INFINITY]);
  return spans;
}

/** The nearest-rank percentile, or null without values. */
function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? null;
}
