import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';
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

// runWorker says nothing when it claims: the first claim request it sends is the sign. Node's HTTP
// client channels time each claim and each complete (from the request made to the answer's headers),
// printed as one `stats {...}` line when the worker stops: how many jobs a claim brought, and how long
// the worker waited for the server. Nothing is wrapped: the worker runs as users run it.
const timed = { claims: [] as number[], completes: [] as number[] };
const started = new WeakMap<ClientRequest, { at: number; into: number[] }>();
let claimed = false;
subscribe('http.client.request.start', (message) => {
  const { request } = message as { request: ClientRequest };
  const into = request.path.endsWith('/v1/workers/claims')
    ? timed.claims
    : request.path.endsWith('/complete')
      ? timed.completes
      : undefined;
  if (!into) return;
  started.set(request, { at: performance.now(), into });
  if (into === timed.claims && !claimed) {
    claimed = true;
    console.log('ready');
  }
});
subscribe('http.client.response.finish', (message) => {
  const { request } = message as { request: ClientRequest };
  const call = started.get(request);
  call?.into.push(performance.now() - call.at);
});
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
