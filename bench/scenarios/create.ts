import { type LoadOptions, type LoadResult, measure } from '../load.js';
import { sendBody } from '../rpc.js';
import type { ServerKind } from '../servers/kinds.js';
import { launch } from '../servers/launch.js';

export type Load = Omit<LoadOptions, 'body'>;

/** Non-blocking SendMessage of an hour-long job, a new messageId per request: tasks accumulate. */
export async function create(kind: ServerKind, load: Load): Promise<LoadResult> {
  const server = await launch(kind);
  try {
    return await measure(server, { ...load, body: sendBody() });
  } finally {
    await server.stop();
  }
}
