import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderDocument } from './document.js';
import type { LoadResult } from './load.js';
import { describeMachine } from './machine.js';
import { type Options, parseOptions } from './options.js';
import { type ProfileSummary, profileLoad } from './profile.js';
import { fanoutTable, loadTable, ms, pushTable, retainedTable, targetsTable, writeReport } from './report.js';
import { emptyResults, loadResults, type Results, saveResults } from './results.js';
import { createTasks, sendBody } from './rpc.js';
import { create, type Load } from './scenarios/create.js';
import { fanout } from './scenarios/fanout.js';
import { poll, roundRobin } from './scenarios/poll.js';
import { PUSH_KINDS, push } from './scenarios/push.js';
import { retained, type SeededStore, seedStores } from './scenarios/retained.js';
import { copyDb } from './seed/files.js';
import { SERVER_KINDS, SERVER_LABELS, type ServerKind } from './servers/launch.js';
import { freshDbPath } from './temp.js';

/** npm run bench: every scenario, interleaved rounds, one report. See docs/BENCHMARKS.md. */
async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2));
  if (o.render) {
    const saved = loadResults(o.render);
    writeReport(o.out, renderDocument(saved));
    log(`report written to ${o.out} from ${o.render}`);
    return;
  }
  const started = performance.now();
  const r = emptyResults(o, describeMachine());
  const load: Load = {
    connections: o.connections,
    durationS: o.durationS,
    warmupS: o.warmupS,
    quietWaitS: o.quietWaitS,
    retries: o.retries,
  };
  log(
    `taskhandle bench: ${o.rounds} round(s), ${o.durationS} s per measurement, ${r.machine.cpu}, ${r.machine.cores} cores`,
  );

  let stores: SeededStore[] = [];
  if (o.scenarios.has('retained')) {
    for (const kind of ['taskhandle', 'sdk-sqlite'] as const) {
      log(`seeding ${kind}: ${o.retainedSizes.join(', ')} tasks`);
      const seeded = await seedStores(kind, o.retainedSizes, o.templateTasks, o.pollTasks);
      for (const s of seeded)
        log(`  ${s.tasks} tasks, ${Math.round(s.bytesPerTask)} bytes/task, ${s.seedS.toFixed(1)} s`);
      stores.push(...seeded);
    }
    r.stores = stores.map(({ pollIds: _ids, path: _path, ...rest }) => rest);
  }

  for (let round = 0; round < o.rounds; round++) {
    const order = rotate(SERVER_KINDS, round);
    const tag = `[round ${round + 1}/${o.rounds}]`;
    if (o.scenarios.has('create'))
      for (const k of order)
        await attempt(r, `${tag} create ${k}`, async () =>
          record(r.create, k, await create(k, load), `${tag} create`),
        );
    if (o.scenarios.has('poll'))
      for (const k of order)
        await attempt(r, `${tag} poll ${k}`, async () =>
          record(r.poll, k, await poll(k, load, o.pollTasks), `${tag} poll`),
        );
    if (o.scenarios.has('fanout'))
      for (const k of order.filter((k) => k !== 'floor')) {
        const subscribers = k === 'taskhandle' ? o.subscribers : o.sdkSubscribers;
        const f = await attempt(r, `${tag} fan-out ${k}`, () =>
          fanout(k, {
            subscribers,
            tasks: o.fanoutTasks,
            openConcurrency: 200,
            deliveryTimeoutMs: 30_000,
          }),
        );
        if (!f) continue;
        append(r.fanout, k, f);
        log(
          `${tag} fan-out ${SERVER_LABELS[k]}: ${f.received}/${f.opened}/${f.subscribers} got it, all after ` +
            `${Math.round(f.allReceivedMs)} ms, RSS +${f.rssGrowthMb.toFixed(1)} MB, client ELU ${f.clientElu.toFixed(2)}` +
            (f.error ? ` (${f.error})` : ''),
        );
      }
    if (o.scenarios.has('retained'))
      for (const store of rotate(stores, round)) {
        const m = await attempt(r, `${tag} retained ${store.kind} ${store.size}`, () =>
          retained(store, load),
        );
        if (!m) continue;
        let row = r.retained.find((x) => x.kind === store.kind && x.size === store.size);
        if (!row) {
          row = { kind: store.kind, size: store.size, poll: [], create: [] };
          r.retained.push(row);
        }
        row.poll.push(m.poll);
        row.create.push(m.create);
        logLoad(`${tag} retained ${store.size} poll`, store.kind, m.poll);
        logLoad(`${tag} retained ${store.size} create`, store.kind, m.create);
      }
    if (o.scenarios.has('push'))
      for (const k of rotate(PUSH_KINDS, round)) {
        const p = await attempt(r, `${tag} push ${k}`, () =>
          push(k, {
            tasks: o.pushTasks,
            concurrency: o.pushConcurrency,
            timeoutMs: o.pushTimeoutS * 1000,
            serverConcurrency: o.serverPushConcurrency,
            quietWaitS: o.quietWaitS,
          }),
        );
        if (!p) continue;
        append(r.push, k, p);
        log(
          `${tag} push ${SERVER_LABELS[k]}: ${p.delivered}/${p.expected} delivered (${p.posts} POSTs, ` +
            `${p.duplicates} duplicates), ${Math.round(p.deliveriesPerS)}/s first to last, ` +
            `${Math.round(p.endToEndPerS)}/s from the first create, delay p50 ${ms(p.p50DelayMs)} ms p99 ${ms(p.p99DelayMs)} ms, ` +
            `send → completed p50 ${ms(p.completedP50Ms)} ms, ` +
            `all after ${Number.isFinite(p.allDeliveredS) ? `${p.allDeliveredS.toFixed(1)} s` : 'never'} ` +
            `(creates ${p.createS.toFixed(1)} s), server CPU ${p.serverCpu.toFixed(2)}, client ELU ${p.clientElu.toFixed(2)}, other CPU ${p.otherCpu.toFixed(2)}` +
            (p.error ? ` (${p.error})` : ''),
        );
      }
  }

  if (o.profile) r.profiles = await profiles(r, o, load, stores);
  stores = [];
  r.elapsedS = (performance.now() - started) / 1000;

  const sections = [targetsTable(r), loadTable(r), fanoutTable(r), retainedTable(r), pushTable(r)];
  console.log(`\n${sections.join('\n\n')}\n`);
  const saved = join(tmpdir(), `taskhandle-bench-${o.smoke ? 'smoke' : 'results'}.json`);
  saveResults(saved, r);
  writeReport(o.out, renderDocument(r));
  log(`report written to ${o.out}; the run took ${r.elapsedS.toFixed(0)} s; results saved in ${saved}`);
  if (o.smoke) checkEverythingRan(r);
}

async function profiles(
  r: Results,
  o: Options,
  load: Load,
  stores: SeededStore[],
): Promise<ProfileSummary[]> {
  const out: ProfileSummary[] = [];
  const add = async (label: string, setup: (url: string) => Promise<() => string>, dbPath?: string) => {
    log(`profiling taskhandle: ${label}`);
    const p = await attempt(r, `profile ${label}`, () => profileLoad(label, load, setup, dbPath));
    if (p) out.push(p);
  };
  await add('create (fresh store)', async () => sendBody());
  await add(`poll (${o.pollTasks} working tasks)`, async (url) =>
    roundRobin(await createTasks(url, o.pollTasks)),
  );
  const largest = stores.filter((s) => s.kind === 'taskhandle').sort((a, b) => b.size - a.size)[0];
  if (largest) {
    for (const what of ['poll', 'create'] as const) {
      const path = freshDbPath('profile-retained');
      copyDb(largest.path, path);
      const setup = async () => (what === 'poll' ? roundRobin(largest.pollIds) : sendBody());
      await add(`${what} at ${largest.size.toLocaleString('en')} stored tasks`, setup, path);
    }
  }
  return out;
}

/** Smoke runs assert no timing, only that every scenario produced answers. */
function checkEverythingRan(r: Results): void {
  const loads = [
    ...Object.values(r.create).flat(),
    ...Object.values(r.poll).flat(),
    ...r.retained.flatMap((x) => [...x.poll, ...x.create]),
  ];
  const broken = [
    ...loads.filter((l) => l.requests === 0).map(() => 'a load measurement got no valid answer'),
    ...Object.values(r.fanout)
      .flat()
      .filter((f) => f.received === 0)
      .map(() => 'a fan-out run delivered no transition'),
    // at these sizes every notification must arrive, or delivery is broken
    ...Object.values(r.push)
      .flat()
      .filter((p) => p.delivered < p.expected)
      .map((p) => `a push run got ${p.delivered} of ${p.expected} notifications`),
  ];
  const expected = r.options.scenarios.size;
  const ran = ['create', 'poll', 'fanout', 'retained', 'push'].filter((s) =>
    s === 'retained'
      ? r.retained.length > 0
      : Object.keys(r[s as 'create' | 'poll' | 'fanout' | 'push']).length > 0,
  ).length;
  if (ran < expected) broken.push(`only ${ran} of ${expected} scenarios produced results`);
  broken.push(...r.errors);
  if (broken.length) {
    console.error(`smoke run failed:\n  ${[...new Set(broken)].join('\n  ')}`);
    process.exitCode = 1;
  }
}

/** Runs one measurement; a failure is logged and reported, and the run goes on. */
async function attempt<T>(r: Results, what: string, run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    const message = `${what}: ${(err as Error).message.split('\n')[0]}`;
    log(`FAILED ${message}`);
    r.errors.push(message);
    return undefined;
  }
}

function record(into: Results['create'], kind: ServerKind, m: LoadResult, what: string): void {
  append(into, kind, m);
  logLoad(what, kind, m);
}

function append<T>(into: Partial<Record<ServerKind, T[]>>, kind: ServerKind, value: T): void {
  const list = into[kind] ?? [];
  list.push(value);
  into[kind] = list;
}

function logLoad(what: string, kind: ServerKind | SeededStore['kind'], m: LoadResult): void {
  log(
    `${what} ${SERVER_LABELS[kind]}: ${Math.round(m.rps)} req/s, p50 ${ms(m.p50Ms)} ms, p99 ${ms(m.p99Ms)} ms, ` +
      `server CPU ${m.serverCpu.toFixed(2)}, client CPU ${m.clientCpu.toFixed(2)}, other CPU ${m.otherCpu.toFixed(2)}` +
      (m.failures ? `, ${m.failures} FAILED` : ''),
  );
}

const rotate = <T>(list: readonly T[], by: number): T[] =>
  list.map((_, i) => list[(i + by) % list.length] as T);
const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

main().then(
  () => process.exit(),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
