import { type LoadResult, measure } from '../load.js';
import { sendBody } from '../rpc.js';
import { copyDb, dbBytes, removeDb } from '../seed/files.js';
import { multiplyTasks, sampleTaskIds } from '../seed/multiply.js';
import { makeTemplate, type StoreKind } from '../seed/templates.js';
import { launch } from '../servers/launch.js';
import { freshDbPath } from '../temp.js';
import type { Load } from './create.js';
import { roundRobin } from './poll.js';

/** A seeded store, kept unchanged; each measurement runs on a fresh copy of it. */
export interface SeededStore {
  kind: StoreKind;
  size: number;
  path: string;
  tasks: number;
  bytesPerTask: number;
  seedS: number;
  /** Tasks to poll, drawn at random from the whole store. */
  pollIds: string[];
}

/** Seeds one store per size from one template made through HTTP, then copied in SQL. */
export async function seedStores(
  kind: StoreKind,
  sizes: readonly number[],
  templateTasks: number,
  pollTasks: number,
): Promise<SeededStore[]> {
  const template = await makeTemplate(kind, templateTasks);
  const stores: SeededStore[] = [];
  for (const size of sizes) {
    const t0 = performance.now();
    const path = freshDbPath(`${kind}-${size}`);
    copyDb(template, path);
    const { tasks } = multiplyTasks(path, size);
    stores.push({
      kind,
      size,
      path,
      tasks,
      bytesPerTask: dbBytes(path) / tasks,
      seedS: (performance.now() - t0) / 1000,
      pollIds: sampleTaskIds(path, pollTasks),
    });
  }
  removeDb(template);
  return stores;
}

/** Poll (random stored tasks), then create, on a fresh copy of a seeded store. */
export async function retained(
  store: SeededStore,
  load: Load,
): Promise<{ poll: LoadResult; create: LoadResult }> {
  const path = freshDbPath(`${store.kind}-${store.size}-run`);
  copyDb(store.path, path);
  const server = await launch(store.kind, { dbPath: path });
  try {
    const poll = await measure(server, { ...load, body: roundRobin(store.pollIds) });
    const create = await measure(server, { ...load, body: sendBody() });
    return { poll, create };
  } finally {
    await server.stop();
    removeDb(path);
  }
}
