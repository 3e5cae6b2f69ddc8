import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as wait } from 'node:timers/promises';
import { machineBusySeconds, waitForQuiet } from '../proc-stats.js';
import { call, sendBody } from '../rpc.js';
import type { ServerKind } from '../servers/kinds.js';
import { launch } from '../servers/launch.js';
import { percentile } from '../stats.js';

/** The servers that send webhooks here: taskhandle, and the SDK reference with its own push sender. */
export const PUSH_KINDS = ['sdk-memory', 'taskhandle'] as const satisfies readonly ServerKind[];

/** A job that completes almost at once on both servers (the SDK reference completes it without work). */
export const INSTANT_EXPORT = { data: { skill: 'export', input: { rows: 1 } } };

/** After the last expected notification, keep listening this long for repeats. */
export const PUSH_GRACE_MS = 1000;

export interface PushOptions {
  /** Tasks created, each with its own inline webhook config. */
  tasks: number;
  /** SendMessage requests in flight at once. */
  concurrency: number;
  /** From the first create: give up waiting for notifications after this long. */
  timeoutMs: number;
  /** taskhandle's PUSH_CONCURRENCY (deliveries in flight). */
  serverConcurrency: number;
  /** First wait up to this long for the (shared) machine to go idle. */
  quietWaitS: number;
}

export interface PushResult {
  /** Completion notifications expected: one per task asked for. */
  expected: number;
  /** Tasks the server accepted. */
  created: number;
  /** Tasks whose completed-state notification arrived (the first one counts). */
  delivered: number;
  /** POSTs that repeated one already received (same notification id; without an id, same task, event and state). */
  duplicates: number;
  /** Every POST received, whatever it announced (the SDK sends one per event). */
  posts: number;
  /** Seconds to create every task. */
  createS: number;
  /** Completion notifications per second, from the first one received to the last. */
  deliveriesPerS: number;
  /** Completion notifications per second, from the first create sent to the last notification received. */
  endToEndPerS: number;
  /** Per task: from the transition (the notification's status.timestamp) to its receipt (ms). */
  p50DelayMs: number;
  p99DelayMs: number;
  maxDelayMs: number;
  /** Per task: from its SendMessage sent to its completed transition (ms): how long tasks took to run. */
  completedP50Ms: number;
  completedP99Ms: number;
  /** From the first create sent until every expected notification had arrived (s); NaN if some never did. */
  allDeliveredS: number;
  /** From the first create sent to the last completion notification received, complete or not (s). */
  lastDeliveryS: number;
  /** Server CPU / wall time from the first create to the last notification (1.0 = one core). */
  serverCpu: number;
  /** Event-loop utilisation of this process (sender and receiver) over the same time. */
  clientElu: number;
  /** CPU used by every other process on the machine / wall time over the same time: near 0 when quiet. */
  otherCpu: number;
  /** Notifications of another terminal state (failed, canceled, rejected) instead of completed. */
  otherTerminal: number;
  /** Why some notifications are missing, or creates failed. */
  error?: string;
}

interface Receipt {
  /** Wall-clock ms when the request arrived (the clock the server stamps transitions with). */
  at: number;
  id: string | undefined;
  /** The StreamResponse member: statusUpdate, task, artifactUpdate, message. */
  event: string;
  taskId: string | undefined;
  state: string | undefined;
  /** status.timestamp, ms since the epoch. */
  transitionAt: number;
}

/** A webhook receiver in this process: answers 204 at once and records every POST. */
class Receiver {
  readonly receipts: Receipt[] = [];
  /** Task id → its first completed-state notification. */
  readonly completed = new Map<string, Receipt>();
  #onCompleted: (() => void) | undefined;
  readonly #server = createServer((req, res) => {
    const at = Date.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(204).end();
      this.#record(receipt(at, req, Buffer.concat(chunks).toString('utf8')));
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', resolve);
    });
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once every task of `ids` has its completed notification, or when `signal` aborts. */
  async allCompleted(ids: ReadonlySet<string>, signal: AbortSignal): Promise<void> {
    const done = () => [...ids].every((id) => this.completed.has(id));
    if (done()) return;
    await new Promise<void>((resolve) => {
      let left = [...ids].filter((id) => !this.completed.has(id)).length;
      this.#onCompleted = () => {
        left--;
        if (left <= 0 && done()) resolve();
      };
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    this.#onCompleted = undefined;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #record(r: Receipt): void {
    this.receipts.push(r);
    if (r.taskId && r.state === 'TASK_STATE_COMPLETED' && !this.completed.has(r.taskId)) {
      this.completed.set(r.taskId, r);
      this.#onCompleted?.();
    }
  }
}

function receipt(at: number, req: IncomingMessage, text: string): Receipt {
  const id = req.headers['x-a2a-notification-id'];
  // biome-ignore lint/suspicious/noExplicitAny: a StreamResponse, read loosely
  let body: any = {};
  try {
    body = JSON.parse(text);
  } catch {
    // counted as a POST, never as a delivery
  }
  const event = Object.keys(body)[0] ?? '?';
  const value = body[event] ?? {};
  const status = event === 'task' || event === 'statusUpdate' ? value.status : undefined;
  return {
    at,
    id: typeof id === 'string' ? id : undefined,
    event,
    taskId: event === 'task' ? value.id : value.taskId,
    state: status?.state,
    transitionAt: status?.timestamp ? Date.parse(status.timestamp) : Number.NaN,
  };
}

/**
 * N tasks that complete almost at once, each created (non-blocking, `concurrency` in flight) with
 * an inline webhook pointing at a receiver in this process; measures how the completion
 * notifications arrive: how many, how fast, how long after each transition, and repeats.
 */
export async function push(kind: (typeof PUSH_KINDS)[number], o: PushOptions): Promise<PushResult> {
  const receiver = new Receiver();
  const hook = await receiver.start();
  const server = await launch(
    kind,
    kind === 'taskhandle'
      ? { env: { PUSH_ALLOW: '127.0.0.1', PUSH_CONCURRENCY: String(o.serverConcurrency) } }
      : { args: ['--push'] },
  );
  const timeout = new AbortController();
  try {
    const body = sendBody(INSTANT_EXPORT, undefined, { taskPushNotificationConfig: { url: hook } });
    const ids = new Set<string>();
    const sentAt = new Map<string, number>();
    let failed = 0;
    let firstError: string | undefined;
    let next = 0;
    const worker = async () => {
      while (next < o.tasks && !timeout.signal.aborted) {
        next++;
        const sent = Date.now();
        try {
          const id = (await call(server.url, body())).result?.task?.id;
          if (typeof id !== 'string') throw new Error('SendMessage returned no task');
          ids.add(id);
          sentAt.set(id, sent);
        } catch (err) {
          failed++;
          firstError ??= (err as Error).message.split('\n')[0];
        }
      }
    };

    if (o.quietWaitS > 0) await waitForQuiet(o.quietWaitS, () => server.cpuSeconds(), 0.3);
    const cpu0 = server.cpuSeconds();
    const client0 = process.cpuUsage();
    const machine0 = machineBusySeconds();
    const elu0 = performance.eventLoopUtilization();
    const start = Date.now();
    const deadline = wait(o.timeoutMs, undefined, { signal: timeout.signal }).then(
      () => timeout.abort(),
      () => {},
    );
    await Promise.race([
      Promise.all(Array.from({ length: Math.min(o.concurrency, o.tasks) }, worker)),
      deadline,
    ]);
    const createS = (Date.now() - start) / 1000;
    await receiver.allCompleted(ids, timeout.signal);
    const wall = (Date.now() - start) / 1000;
    const serverCpu = (server.cpuSeconds() - cpu0) / wall;
    const client = process.cpuUsage(client0);
    const otherCpu = Math.max(
      0,
      (machineBusySeconds() - machine0) / wall - serverCpu - (client.user + client.system) / 1e6 / wall,
    );
    const elu = performance.eventLoopUtilization(elu0).utilization;
    if (!timeout.signal.aborted) await wait(PUSH_GRACE_MS);
    const crash = server.crashed();

    const mine = [...receiver.completed.values()].filter((r) => r.taskId && ids.has(r.taskId));
    const times = mine.map((r) => r.at);
    const first = Math.min(...times);
    const last = Math.max(...times);
    const delays = mine.map((r) => r.at - r.transitionAt).filter(Number.isFinite);
    const runs = mine
      .map((r) => r.transitionAt - (sentAt.get(r.taskId as string) as number))
      .filter(Number.isFinite);
    const keys = receiver.receipts.map((r) => r.id ?? `${r.taskId}/${r.event}/${r.state}`);
    const complete = ids.size === o.tasks && mine.length === o.tasks;
    const errors = [
      ...(crash ? [crash.split('\n')[0]] : []),
      ...(failed ? [`${failed} of ${o.tasks} creates failed (${firstError})`] : []),
      ...(ids.size + failed < o.tasks
        ? [`only ${ids.size} of ${o.tasks} tasks created before the timeout`]
        : []),
      ...(complete
        ? []
        : [
            `${o.tasks - mine.length} of ${o.tasks} completion notifications missing after ${Math.round(o.timeoutMs / 1000)} s`,
          ]),
    ];
    return {
      expected: o.tasks,
      created: ids.size,
      delivered: mine.length,
      duplicates: keys.length - new Set(keys).size,
      posts: receiver.receipts.length,
      createS,
      deliveriesPerS: mine.length > 1 && last > first ? mine.length / ((last - first) / 1000) : Number.NaN,
      endToEndPerS: mine.length ? mine.length / ((last - start) / 1000) : Number.NaN,
      p50DelayMs: percentile(delays, 50),
      p99DelayMs: percentile(delays, 99),
      maxDelayMs: delays.length ? Math.max(...delays) : Number.NaN,
      completedP50Ms: percentile(runs, 50),
      completedP99Ms: percentile(runs, 99),
      allDeliveredS: complete ? (last - start) / 1000 : Number.NaN,
      lastDeliveryS: mine.length ? (last - start) / 1000 : Number.NaN,
      serverCpu,
      clientElu: elu,
      otherCpu,
      otherTerminal: receiver.receipts.filter(
        (r) => r.state && /FAILED|CANCELED|REJECTED/.test(r.state) && r.taskId && ids.has(r.taskId),
      ).length,
      ...(errors.length ? { error: errors.join('; ') } : {}),
    };
  } finally {
    timeout.abort();
    await server.stop();
    await receiver.close();
  }
}
