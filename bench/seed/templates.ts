import { call, cancelBody, createTasks, INSTANT_JOB, waitUntilDone } from '../rpc.js';
import { launch } from '../servers/launch.js';
import { freshDbPath } from '../temp.js';

export type StoreKind = 'taskhandle' | 'sdk-sqlite';

/**
 * A small store made by the real server through HTTP: `count` finished tasks (most retained tasks
 * are done ones). taskhandle runs a job that ends at once; the SDK reference's jobs never end, so
 * its tasks are canceled. The server is stopped cleanly, so the file is complete.
 */
export async function makeTemplate(kind: StoreKind, count: number): Promise<string> {
  const dbPath = freshDbPath(`${kind}-template`);
  const server = await launch(kind, { dbPath });
  try {
    if (kind === 'taskhandle') {
      await waitUntilDone(server.url, await createTasks(server.url, count, INSTANT_JOB));
    } else {
      for (const id of await createTasks(server.url, count)) await call(server.url, cancelBody(id));
    }
  } finally {
    await server.stop();
  }
  return dbPath;
}
