import { randomUUID } from 'node:crypto';
import { type LoadResult, measure } from '../load.js';
import { createTasks, getBody } from '../rpc.js';
import { launch, type ServerKind } from '../servers/launch.js';
import type { Load } from './create.js';

/** GetTask of `tasks` existing (working) tasks, round-robin. The floor gets ids it never stored. */
export async function poll(kind: ServerKind, load: Load, tasks: number): Promise<LoadResult> {
  const server = await launch(kind);
  try {
    const ids =
      kind === 'floor'
        ? Array.from({ length: tasks }, () => randomUUID())
        : await createTasks(server.url, tasks);
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
