import { hostname } from 'node:os';
import { HeldJob } from './held-job.js';
import type { Handler, Job } from './job.js';
import { runJob } from './run-job.js';
import type { ClaimedJob } from './types.js';
import { WorkerHttp } from './worker-http.js';

/** The options of {@link runWorker}. */
export interface WorkerOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:41241`. */
  url: string;
  /** An API key, sent as `X-API-Key`. */
  apiKey?: string;
  /** A JWT (or an API key), sent as `Authorization: Bearer`. */
  token?: string;
  /** This worker's name, shown in the console beside the tasks it holds. Default: `host-pid`. */
  name?: string;
  /** A handler per remote skill id: the worker claims these skills and no other. */
  skills: Record<string, Handler>;
  /** How many jobs run at once (default 1); each claim asks for as many as there are free slots. */
  concurrency?: number;
  /** How long a claim waits on the server for a job when none is runnable (default 30000, at most 60000). */
  waitMs?: number;
  /** How long {@link Worker.stop} lets running jobs finish before it aborts and releases them (default 10000). */
  stopGraceMs?: number;
  /**
   * Told of what went wrong: a handler's error that is not a `JobError` (the task's owner reads only
   * that the worker failed), a claim or heartbeat that failed, a lost lease. Default `console.error`.
   * The worker carries on whatever it is told.
   */
  onError?: (err: unknown, job?: Job) => void;
}

/** A running worker, as {@link runWorker} answers it. */
export interface Worker {
  /**
   * Stops claiming, lets running jobs finish for `stopGraceMs`, then aborts the rest (their signal's
   * reason is `shutdown`) and releases them, so that another worker takes them over at once. Resolves
   * once every job has settled (a handler that ignores its signal is waited for 2 s more, no longer).
   * Calls after the first answer the same promise.
   */
  stop(): Promise<void>;
}

const MIN_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 30_000;
/** After the shutdown abort, how long stop() waits for handlers to unwind (they are released already). */
const ABORT_GRACE_MS = 2000;
/** What the server takes as a worker's name (faces/workers/requests.ts). */
const WORKER_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$/;
/** The most jobs one claim may ask for (docs/workers.md). */
const MAX_PER_CLAIM = 32;

/**
 * Works the remote skills of a taskhandle server (docs/workers.md): claims their tasks by long poll,
 * runs each with its handler, heartbeats its lease, and writes how it ended. A network failure or a
 * refused claim is reported to `onError` and tried again after a backoff (1 s, doubling to 30 s):
 * the loop never stops by itself.
 *
 * @example
 * import { JobError, runWorker } from 'taskhandle/worker';
 *
 * const worker = runWorker({
 *   url: 'http://127.0.0.1:41241',
 *   apiKey: process.env.TASKHANDLE_API_KEY,
 *   name: 'gpu-1',
 *   concurrency: 4,
 *   skills: {
 *     async resize(job) {
 *       const { url, width } = job.input as { url: string; width: number };
 *       const image = await fetch(url, { signal: job.signal });
 *       if (!image.ok) throw new JobError(`${url} answered ${image.status}`, 'fetch', { transient: true });
 *       await job.progress({ percent: 50, message: 'resizing' });
 *       await job.upload({ name: 'resized.png', mediaType: 'image/png', body: resize(image.body, width) });
 *       return { message: `resized to ${width} px` };
 *     },
 *   },
 * });
 * process.once('SIGTERM', () => void worker.stop());
 */
export function runWorker(options: WorkerOptions): Worker {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`runWorker: concurrency must be a whole number from 1; got ${concurrency}`);
  }
  const skills = Object.keys(options.skills);
  if (skills.length === 0) throw new RangeError('runWorker: skills names no skill to work');
  const host = hostname()
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 50);
  const name = options.name ?? `${host || 'worker'}-${process.pid}`;
  if (!WORKER_NAME.test(name)) {
    throw new RangeError(
      `runWorker: name must be 1 to 64 letters, digits, ".", "_", ":", "@" or "-", starting with a letter or digit; got ${JSON.stringify(name)}`,
    );
  }
  const waitMs = options.waitMs ?? 30_000;
  if (!Number.isInteger(waitMs) || waitMs < 0 || waitMs > 60_000) {
    throw new RangeError(`runWorker: waitMs must be a whole number of ms from 0 to 60000; got ${waitMs}`);
  }
  const stopGraceMs = options.stopGraceMs ?? 10_000;
  const onError = options.onError ?? ((err: unknown) => console.error(err));
  const http = new WorkerHttp(options.url, options);

  const running = new Map<HeldJob, Promise<void>>();
  const stopping = new AbortController();
  const stopCalled = new Promise<void>((resolve) =>
    stopping.signal.addEventListener('abort', () => resolve()),
  );
  let wake: () => void = () => {};
  /** Resolves when a slot frees up or stop() is called. */
  const woken = () => new Promise<void>((resolve) => (wake = resolve));

  const start = (claimed: ClaimedJob): void => {
    const job = new HeldJob(claimed, http, (err) => onError(err, job));
    const handler = Object.hasOwn(options.skills, claimed.skill) ? options.skills[claimed.skill] : undefined;
    const done = runJob(job, handler, { worker: name, onError: (err) => onError(err, job) })
      .catch((err: unknown) => onError(err, job))
      .finally(() => {
        running.delete(job);
        wake();
      });
    running.set(job, done);
    // Claimed as the worker was told to stop (the claim's answer crossed its abort): hand it back.
    if (stopping.signal.aborted) job.abort('shutdown');
  };

  const loop = async (): Promise<void> => {
    let backoffMs = MIN_BACKOFF_MS;
    while (!stopping.signal.aborted) {
      const free = concurrency - running.size;
      if (free <= 0) {
        await woken();
        continue;
      }
      try {
        const { jobs } = await http.call<{ jobs: ClaimedJob[] }>({
          path: '/claims',
          json: { skills, max: Math.min(free, MAX_PER_CLAIM), waitMs, worker: name },
          signal: stopping.signal,
        });
        backoffMs = MIN_BACKOFF_MS;
        for (const claimed of jobs) start(claimed);
      } catch (err) {
        if (stopping.signal.aborted) break;
        onError(err);
        await within(stopCalled, backoffMs);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
      }
    }
  };
  const looping = loop();

  let stopped: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    stopping.abort();
    wake();
    await looping;
    const all = () => Promise.all(running.values());
    if (!(await within(all(), stopGraceMs))) {
      for (const job of running.keys()) job.abort('shutdown');
      await within(all(), ABORT_GRACE_MS);
    }
    http.close();
  };
  return {
    stop: () => {
      stopped ??= stop();
      return stopped;
    },
  };
}

/** Whether `p` settled within `ms` (the timer is cleared either way: it keeps no process alive). */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(resolve, ms, false);
  });
  try {
    return await Promise.race([p.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
