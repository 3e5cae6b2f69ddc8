import { randomUUID } from 'node:crypto';
import { type LoadResult, measure } from '../load.js';
import { call, createTasks, getBody } from '../rpc.js';
import type { ServerKind } from '../servers/kinds.js';
import { launch } from '../servers/launch.js';
import type { Load } from './create.js';

/**
 * GetTask of `tasks` existing tasks (hour-long jobs: most of them queued), round-robin. The floor gets ids it never stored. A
 * server of several instances gets its tasks created through the first one and polled through all:
 * any instance answers for any task (a JSON-RPC error would count as a failed request).
 */
export async function poll(kind: ServerKind, load: Load, tasks: number): Promise<LoadResult> {
  const server = await launch(kind);
  try {
    const ids =
      kind === 'floor'
        ? Array.from({ length: tasks }, () => randomUUID())
        : await createTasks(server.url, tasks);
    // before the load: another instance finds a task it did not create, or the run stops here
    for (const url of server.urls.slice(1)) await call(url, getBody(ids[0] as string));
    return await measure(server, { ...load, body: roundRobin(ids) });
  } finally {
    await server.stop();
  }
}

/** GetTask bodies cycling through `ids`. */
export function roundRobin(ids: readonly string[]): () => string {
  let i = 0;
  return () => getBody(ids[i++ % ids.length] as string);
}
