import { parseArgs } from 'node:util';
import PgBoss from 'pg-boss';

/**
 * pg-boss's side of the end-to-end scenario, in its own process as a deployed worker would be:
 * `--workers` work() loops on queue `--queue`, each fetching up to `--batch` jobs per poll at
 * pg-boss's shortest polling interval (0.5 s), completing each job at once (the handler returns).
 * Prints `ready` once it works; stops on SIGTERM.
 */
const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    schema: { type: 'string' },
    queue: { type: 'string', default: 'e2e' },
    workers: { type: 'string', default: '4' },
    batch: { type: 'string', default: '32' },
  },
});
if (!values.url || !values.schema) throw new Error('usage: --url postgres://... --schema NAME');

const boss = new PgBoss({
  connectionString: values.url,
  schema: values.schema,
  supervise: false,
  schedule: false,
});
boss.on('error', (err) => console.error(err));
await boss.start();
for (let i = 0; i < Number(values.workers); i++)
  await boss.work(
    values.queue,
    { batchSize: Number(values.batch), pollingIntervalSeconds: 0.5 },
    async () => {},
  );
console.log('ready');
process.on('SIGTERM', () => {
  void boss.stop({ graceful: false, wait: true }).then(() => process.exit(0));
});
