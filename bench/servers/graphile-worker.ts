import { parseArgs } from 'node:util';
import { Logger, run } from 'graphile-worker';

/**
 * graphile-worker's side of the end-to-end scenario, in its own process as a deployed worker would
 * be: `run()` with the configuration graphile-worker's performance page recommends (24 concurrent
 * jobs, a pool of 25, a local queue of 500, completions and failures not delayed for batching), woken
 * by LISTEN/NOTIFY when a job is added. The task `--task` completes at once (its handler returns).
 * Prints `ready` once it works; stops on SIGTERM.
 */
const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    schema: { type: 'string' },
    task: { type: 'string', default: 'e2e' },
    concurrency: { type: 'string', default: '24' },
  },
});
if (!values.url || !values.schema) throw new Error('usage: --url postgres://... --schema NAME');
const concurrency = Number(values.concurrency);

const runner = await run({
  connectionString: values.url,
  schema: values.schema,
  concurrency,
  maxPoolSize: concurrency + 1,
  noHandleSignals: true,
  // its default logger writes a line per job: errors and warnings only, as a deployed worker would
  logger: new Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') console.error(message);
  }),
  preset: { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  taskList: { [values.task]: async () => {} },
});
console.log('ready');
process.on('SIGTERM', () => {
  void runner.stop().then(() => process.exit(0));
});
