import { parseArgs } from 'node:util';
import { runWorker } from 'taskhandle/worker';
import { REMOTE_SKILL } from './remote.js';

/**
 * The worker side of the remote end-to-end kinds, in its own process as a deployed worker would be:
 * runWorker (taskhandle/worker) on `--url` with `--concurrency` jobs at once, each job of the bench's
 * remote skill completed at once (`{ message: 'done' }`). Prints `ready` once its first claim is in
 * flight (the request sent); stops on SIGTERM (the waiting claim dropped), prints how long its
 * claims and completes took (`stats {"claims": [ms...], "completes": [ms...]}`), then exits.
 */
const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
  },
});
if (!values.url) throw new Error('usage: --url http://127.0.0.1:PORT [--concurrency N]');

// runWorker says nothing when it claims: the first claim request it hands to fetch is the sign. The
// same wrapper times each claim and each complete (from the call to the answer's headers), printed
// as one `stats {...}` line when the worker stops: how many jobs a claim brought, and how long the
// worker waited for the server.
const realFetch = globalThis.fetch;
const timed = { claims: [] as number[], completes: [] as number[] };
let claimed = false;
globalThis.fetch = (input, init) => {
  const started = performance.now();
  const answer = realFetch(input, init);
  const url = String(input);
  const into = url.endsWith('/v1/workers/claims')
    ? timed.claims
    : url.endsWith('/complete')
      ? timed.completes
      : undefined;
  if (into === timed.claims && !claimed) {
    claimed = true;
    console.log('ready');
  }
  if (into) void answer.then(() => into.push(performance.now() - started)).catch(() => {});
  return answer;
};
const worker = runWorker({
  url: values.url,
  name: `bench-${process.pid}`,
  concurrency: Number(values.concurrency),
  skills: { [REMOTE_SKILL]: async () => ({ message: 'done' }) },
  onError: (err) => console.error(err),
});
process.once('SIGTERM', () => {
  void worker.stop().then(() => {
    console.log(`stats ${JSON.stringify(timed)}`);
    process.exit(0);
  });
});
