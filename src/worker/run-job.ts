import { isJobError } from '../engine/errors.js';
import { AskedForInput, type HeldJob } from './held-job.js';
import type { Handler, JobResult } from './job.js';
import { isLeaseLost, isNetworkError, isProblemError } from './worker-http.js';

export interface RunJobOptions {
  /** The worker's name, in the message of a failure the task's owner must not read the cause of. */
  worker: string;
  onError: (err: unknown) => void;
}

type Settled = { ok: true; value: JobResult | undefined } | { ok: false; err: unknown };

/**
 * Runs one claimed job to its end and makes the run's last write: complete with what the handler
 * returned, fail with what it threw, release it if the worker stops, or nothing at all once the job
 * asked for input, was canceled or lost its lease. Resolves when the handler has settled.
 */
export async function runJob(job: HeldJob, handler: Handler | undefined, o: RunJobOptions): Promise<void> {
  if (!handler) {
    // Claims name only this worker's skills; a server that hands out another one is told so.
    await last(job, o, 'fail', { message: `the worker "${o.worker}" has no skill "${job.skill}"` });
    return;
  }
  job.start();
  const settled: Promise<Settled> = Promise.resolve()
    .then(() => handler(job))
    .then(
      (value) => ({ ok: true as const, value: value || undefined }),
      (err: unknown) => ({ ok: false as const, err }),
    );
  const aborted = new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
  const first = await Promise.race([settled, aborted]);

  if (job.parked) {
    // The question ended the run on the server; whatever the handler does next is not written.
  } else if (job.signal.aborted) {
    const reason: unknown = job.signal.reason;
    // Released at once, not once the handler unwinds: the next claim takes the task over now.
    if (reason === 'shutdown') await last(job, o, 'release');
    else if (reason === 'lease-lost') {
      o.onError(
        new Error(
          `task ${job.taskId}: the lease was lost (taken over, expired or ended): its result is dropped`,
        ),
      );
    }
  } else if (first) {
    await end(job, first, o);
  }
  job.stopBeating();
  await settled;
  job.stopBeating();
}

async function end(job: HeldJob, s: Settled, o: RunJobOptions): Promise<void> {
  let written: boolean | 'refused' = false;
  if (s.ok) {
    const r = s.value ?? {};
    written = await last(job, o, 'complete', { message: r.message, state: r.state, artifacts: r.artifacts });
  } else if (s.err instanceof AskedForInput) {
    // Cannot happen without job.parked; kept so that a sentinel never reaches fail.
    return;
  } else if (isJobError(s.err)) {
    const { message, code, options } = s.err;
    written = await last(job, o, 'fail', { message, code, retryable: options.transient });
  } else {
    o.onError(s.err);
    written = 'refused';
  }
  // Also when the server refused the ending the handler made (a message too long, a part malformed:
  // onError has the server's detail): the task fails now rather than wait for its lease to run out.
  if (written === 'refused') {
    await last(job, o, 'fail', {
      message: `an internal error in the worker "${o.worker}" (it logged the cause)`,
    });
  }
}

/**
 * Makes the run's last write, trying a network failure again (the lease lasts three beats). True when
 * written or when there is nothing to write (the lease is lost); 'refused' when the server refused it.
 */
async function last(
  job: HeldJob,
  o: RunJobOptions,
  what: 'complete' | 'fail' | 'release',
  json?: unknown,
): Promise<boolean | 'refused'> {
  for (let attempt = 0; ; attempt++) {
    try {
      await job.finish(what, json);
      return true;
    } catch (err) {
      if (isLeaseLost(err)) return true;
      if (!isNetworkError(err) || attempt >= 3) {
        o.onError(err);
        return isProblemError(err) && err.status >= 400 && err.status < 500 ? 'refused' : false;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** attempt));
    }
  }
}
