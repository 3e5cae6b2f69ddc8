import { call, cancelBody, createTasks } from '../rpc.js';
import type { ServerKind } from '../servers/kinds.js';
import { launch } from '../servers/launch.js';
import { type Subscriber, subscribe } from '../sse.js';
import { percentile, sleep } from '../stats.js';

export interface FanoutOptions {
  /** SSE subscribers, spread round-robin over `tasks` tasks. */
  subscribers: number;
  tasks: number;
  /** Streams being opened at once (the rest wait), so the listen backlog never overflows. */
  openConcurrency: number;
  /** Give up waiting for the transition after this long. */
  deliveryTimeoutMs: number;
}

export interface FanoutResult {
  subscribers: number;
  /** Streams that delivered their first event (the task as it stands). */
  opened: number;
  /** Streams that then received the terminal status. */
  received: number;
  /** Seconds to open every stream. */
  subscribeS: number;
  /** From the first CancelTask sent until the last stream received its terminal status (ms). */
  allReceivedMs: number;
  /** Per stream: from the CancelTask of its task to the terminal status on the stream (ms). */
  p50Ms: number;
  p99Ms: number;
  /** Server resident memory growth from before the first stream to after the last one opened. */
  rssGrowthMb: number;
  bytesPerSubscriber: number;
  /** Event-loop utilisation of this (client) process while the transitions were delivered. */
  clientElu: number;
  /** Why streams failed to open, if some did. */
  error?: string;
}

/** N SSE subscribers over M tasks, then one transition (CancelTask) per task. */
export async function fanout(kind: ServerKind, o: FanoutOptions): Promise<FanoutResult> {
  const server = await launch(kind);
  const subs: Subscriber[] = [];
  try {
    // The floor keeps no tasks: its streams are held under any id.
    const ids =
      kind === 'floor'
        ? Array.from({ length: o.tasks }, (_, i) => `floor-task-${i + 1}`)
        : await createTasks(server.url, o.tasks);
    await sleep(1000);
    const rss0 = server.rssBytes();

    let error: string | undefined;
    let next = 0;
    const t0 = performance.now();
    const opener = async () => {
      while (next < o.subscribers && !error) {
        const i = next++;
        try {
          subs.push(await subscribe(server.url, ids[i % ids.length] as string));
        } catch (err) {
          error ??= `stream ${i + 1} of ${o.subscribers}: ${(err as Error).message.split('\n')[0]}`;
        }
      }
    };
    await Promise.all(Array.from({ length: o.openConcurrency }, opener));
    const subscribeS = (performance.now() - t0) / 1000;
    await sleep(1000);
    const rss1 = server.rssBytes();

    const elu0 = performance.eventLoopUtilization();
    const sentAt = new Map<string, number>();
    const start = performance.now();
    const cancels = ids.map((id) => {
      sentAt.set(id, performance.now());
      return call(server.url, cancelBody(id));
    });
    const timeout = sleep(o.deliveryTimeoutMs);
    await Promise.race([Promise.all(subs.map((s) => s.done)), timeout]);
    const elu = performance.eventLoopUtilization(elu0);
    await Promise.allSettled(cancels);

    const delivered = subs.filter((s) => s.transitionAt !== undefined);
    const latencies = delivered.map((s) => (s.transitionAt as number) - (sentAt.get(s.taskId) as number));
    const last = Math.max(...delivered.map((s) => s.transitionAt as number));
    const complete = subs.length > 0 && delivered.length === subs.length;
    return {
      subscribers: o.subscribers,
      opened: subs.length,
      received: delivered.length,
      subscribeS,
      allReceivedMs: complete ? last - start : Number.NaN,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      rssGrowthMb: (rss1 - rss0) / 2 ** 20,
      bytesPerSubscriber: subs.length ? (rss1 - rss0) / subs.length : Number.NaN,
      clientElu: elu.utilization,
      ...(error ? { error } : {}),
    };
  } finally {
    for (const s of subs) s.close();
    await server.stop();
  }
}
