import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { composeEngine } from '../src/engine/compose.js';
import { SkillRegistry } from '../src/engine/registry.js';
import { defineSkill } from '../src/engine/skill.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

/**
 * What one waiting long poll (GetTask with currentGeneration, engine.awaitGeneration) holds on the
 * heap, next to what one open task stream (engine.stream, waiting for its next event) holds: N of
 * each wait on one task that does not change, in process (engine over SQLite, no HTTP: both hold a
 * socket besides, which this does not count), heap measured after a forced GC.
 *
 *   npm run build --silent && npx tsc -p tsconfig.perf.json && node --expose-gc dist/perf/long-poll-heap.js [N]
 */
const N = Number(process.argv[2] ?? 10_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const idle = defineSkill({
  id: 'idle',
  description: 'never runs here (no runner): its task stays queued and unchanged',
  input: z.object({}),
  pollIntervalMs: 1000,
  ttlMs: 3_600_000,
  onInterrupt: 'rerun',
  async run() {
    return undefined;
  },
});

const store = new SqliteStore({ path: ':memory:' });
const { engine, hub } = composeEngine({
  store,
  skills: new SkillRegistry([idle], 'idle'),
  maxTtlMs: 3_600_000,
  cancelGraceMs: 1000,
  artifactUrl: (t, a) => `/${t}/${a}`,
  limits: { maxStreams: 0 }, // no bound: all N wait
});
const { view } = await engine.submit({ owner: 'alice', skill: 'idle', input: {} });
const id = view.record.id;
const generation = view.record.lastSeq;

const heap = async (): Promise<number> => {
  await sleep(200);
  gc();
  await sleep(50);
  gc();
  return process.memoryUsage().heapUsed;
};

async function measure(label: string, start: (signal: AbortSignal) => Promise<unknown>) {
  const before = await heap();
  const stop = new AbortController();
  setMaxListeners(N + 10, stop.signal); // one signal shared by all N here; each request has its own
  const running = Array.from({ length: N }, () => start(stop.signal));
  // Every one waits on the hub once it subscribed (the hub counts tasks, their sets the waiters).
  while (hub.watchedTasks === 0) await sleep(20);
  await sleep(500);
  const during = await heap();
  stop.abort('done');
  await Promise.allSettled(running);
  const after = await heap();
  const perWaiter = (during - before) / N;
  console.log(
    `${label}: ${N} waiting, heap +${((during - before) / 1048576).toFixed(1)} MiB (${Math.round(perWaiter)} B each), ` +
      `${((after - before) / 1048576).toFixed(1)} MiB left once they ended`,
  );
  return perWaiter;
}

const polls = (signal: AbortSignal) => engine.awaitGeneration('alice', id, generation, 30_000, signal);
const streams = async (signal: AbortSignal) => {
  const items = engine.stream('alice', id, { signal });
  await items.next(); // the task as it stands; the second next() waits for an event
  await items.next();
};
// Twice each, alternating: the first round warms the code paths (their compiled code is heap too).
let poll = 0;
let stream = 0;
for (const round of [1, 2]) {
  const label = round === 1 ? ' (warm-up)' : '';
  stream = await measure(`open streams${label}`, streams);
  poll = await measure(`long polls${label}`, polls);
}
console.log(`a waiting poll holds ${(poll / stream).toFixed(2)}x what an open stream holds`);
await store.close();
