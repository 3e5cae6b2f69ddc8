import { parseArgs } from 'node:util';
import { runWorker } from '../../src/worker/index.js';
import { REMOTE_SKILL } from './remote.js';

/**
 * The worker side of the remote end-to-end kinds, in its own process as a deployed worker would be:
 * runWorker (taskhandle/worker) on `--url` with `--concurrency` jobs at once, each job of the bench's
 * remote skill completed at once (`{ message: 'done' }`). Prints `ready` once its first claim is in
 * flight (the request sent); stops on SIGTERM (the waiting claim dropped, then exit).
 */
const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    concurrency: { type: 'string', default: '32' },
  },
});
if (!values.url) throw new Error('usage: --url http://127.0.0.1:PORT [--concurrency N]');

// runWorker says nothing when it claims: the first claim request it hands to fetch is the sign.
const realFetch = globalThis.fetch;
let claimed = false;
globalThis.fetch = (input, init) => {
  const answer = realFetch(input, init);
  if (!claimed && String(input).endsWith('/v1/workers/claims')) {
    claimed = true;
    console.log('ready');
  }
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
  void worker.stop().then(() => process.exit(0));
});
