import { existsSync } from 'node:fs';
import {
  artifactLatencyTable,
  artifactTable,
  artifactTargetsTable,
  medianDownload,
} from './artifact-report.js';
import { renderDocument } from './document.js';
import { REFUSED } from './flood-bounds.js';
import { type FloodSummary, ratio, summariseFlood } from './flood-report.js';
import type { LoadResult } from './load.js';
import { describeMachine } from './machine.js';
import { type Options, parseOptions } from './options.js';
import { probePostgres } from './postgres.js';
import { type ProfileSummary, type ProfileTarget, profileLoad } from './profile.js';
import {
  e2eTable,
  fanoutTable,
  jobTargetsTable,
  loadTable,
  ms,
  pushTable,
  retainedTable,
  targetsTable,
  timelineTable,
  workersTable,
  writeReport,
} from './report.js';
import {
  emptyResults,
  keepUnmeasured,
  loadResults,
  profileKey,
  type Results,
  resultsPath,
  saveResults,
  stampSections,
} from './results.js';
import { createTasks, sendBody } from './rpc.js';
import { ARTIFACT_KINDS, largeArtifact } from './scenarios/artifact.js';
import { create, type Load } from './scenarios/create.js';
import { E2E_KINDS, E2E_LABELS, E2E_POSTGRES, endToEnd } from './scenarios/e2e.js';
import { fairness } from './scenarios/fairness.js';
import { fanout } from './scenarios/fanout.js';
import { DEFAULT_BOUNDS, flood } from './scenarios/flood.js';
import { mcp } from './scenarios/mcp.js';
import { poll, roundRobin } from './scenarios/poll.js';
import { PUSH_KINDS, push } from './scenarios/push.js';
import { retained, type SeededStore, seedStores } from './scenarios/retained.js';
import { TIMELINE_KINDS, timeline } from './scenarios/timeline.js';
import { idleWorkers, WORKERS_KINDS } from './scenarios/workers.js';
import { copyDb } from './seed/files.js';
import { isPostgres, POSTGRES_KINDS, SERVER_KINDS, SERVER_LABELS, type ServerKind } from './servers/kinds.js';
import { usePostgres } from './servers/postgres-cluster.js';
import { checkEverythingRan } from './smoke-check.js';
import { percentile } from './stats.js';
import { freshDbPath } from './temp.js';

/** Fan-out runs on the node:http floor (it holds streams, keeps no tasks) and the SQLite servers. */
const FANOUT_KINDS = [
  'floor',
  'sdk-memory',
  'sdk-sqlite',
  'taskhandle',
] as const satisfies readonly ServerKind[];

/** npm run bench: every scenario, interleaved rounds, one report. See bench/BENCHMARKS.md. */
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
  const withPostgres = await postgres(r, o);
  // create and poll run on every kind; the PostgreSQL ones only where PostgreSQL answers
  const loadKinds = SERVER_KINDS.filter((k) => (withPostgres || !isPostgres(k)) && o.servers.has(k));

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
    const order = rotate(loadKinds, round);
    const tag = `[round ${round + 1}/${o.rounds}]`;
    if (o.scenarios.has('create'))
      for (const k of order)
        await attempt(r, 'create', `${tag} create ${k}`, async () =>
          record(r.create, k, await create(k, load), `${tag} create`),
        );
    if (o.scenarios.has('poll'))
      for (const k of order)
        await attempt(r, 'poll', `${tag} poll ${k}`, async () =>
          record(r.poll, k, await poll(k, load, o.pollTasks), `${tag} poll`),
        );
    if (o.scenarios.has('mcp')) {
      const m = await attempt(r, 'mcp', `${tag} mcp taskhandle`, () => mcp(load, o.pollTasks));
      if (m) {
        r.mcp.create.push(m.create);
        r.mcp.get.push(m.get);
        logLoad(`${tag} mcp tools/call`, 'taskhandle', m.create);
        logLoad(`${tag} mcp tasks/get`, 'taskhandle', m.get);
      }
    }
    if (o.scenarios.has('fanout'))
      for (const k of rotate(FANOUT_KINDS, round)) {
        const subscribers = k === 'taskhandle' || k === 'floor' ? o.subscribers : o.sdkSubscribers;
        const f = await attempt(r, 'fanout', `${tag} fan-out ${k}`, () =>
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
        const m = await attempt(r, 'retained', `${tag} retained ${store.kind} ${store.size}`, () =>
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
        const p = await attempt(r, 'push', `${tag} push ${k}`, () =>
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
    if (o.scenarios.has('timeline'))
      for (const k of rotate(
        TIMELINE_KINDS.filter((x) => withPostgres || x !== 'taskhandle-pg'),
        round,
      )) {
        const t = await attempt(r, 'timeline', `${tag} timeline ${k}`, () =>
          timeline(k, { jobs: o.smoke ? 30 : 1000, warmup: o.smoke ? 5 : 100 }),
        );
        if (!t) continue;
        r.timeline[k] = [...(r.timeline[k] ?? []), t];
        log(
          `${tag} timeline ${k}: ${t.jobs} jobs one at a time, completed after ${ms(t.atMs.completed)} ms (p50), ` +
            `p99 ${ms(t.p99Ms)} ms, server CPU ${ms(t.cpuMsPerJob)} ms a job` +
            (t.error ? ` (${t.error})` : ''),
        );
      }
    if (o.scenarios.has('e2e'))
      for (const k of rotate(
        E2E_KINDS.filter((x) => o.e2eKinds.has(x) && (withPostgres || !E2E_POSTGRES.includes(x))),
        round,
      )) {
        const e = await attempt(r, 'e2e', `${tag} e2e ${k}`, () =>
          endToEnd(k, {
            jobs: o.e2eJobs,
            inFlight: o.e2eInFlight,
            timeoutS: o.smoke ? 60 : 600,
            quietWaitS: o.quietWaitS,
          }),
        );
        if (!e) continue;
        const list = r.e2e[k] ?? [];
        list.push(e);
        r.e2e[k] = list;
        log(
          `${tag} e2e ${E2E_LABELS[k]}: ${e.completed}/${e.jobs} completed, ${Math.round(e.perS)}/s, ` +
            `create → completed p50 ${ms(e.p50Ms)} ms p99 ${ms(e.p99Ms)} ms, server CPU ${e.serverCpu.toFixed(2)}` +
            (e.workerCpu === undefined ? '' : ` (the worker ${e.workerCpu.toFixed(2)} of it)`) +
            (e.worker
              ? `; the worker: ${e.worker.claims} claims, ${e.worker.jobsPerClaim.toFixed(1)} jobs a claim, ` +
                `claim p50 ${ms(e.worker.claimP50Ms)} ms p99 ${ms(e.worker.claimP99Ms)} ms, ` +
                `complete p50 ${ms(e.worker.completeP50Ms)} ms p99 ${ms(e.worker.completeP99Ms)} ms`
              : '') +
            (e.error ? ` (${e.error})` : ''),
        );
      }
    if (o.scenarios.has('workers'))
      for (const k of rotate(WORKERS_KINDS, round)) {
        const w = await attempt(r, 'workers', `${tag} idle workers ${k}`, () =>
          idleWorkers(k, {
            claims: o.idleClaims,
            waitMs: o.idleWaitMs,
            durationS: o.durationS,
            settleMs: o.smoke ? 300 : 1000,
            rssSettleS: o.smoke ? 0 : 45,
            creates: o.idleCreates,
            quietWaitS: o.quietWaitS,
          }),
        );
        if (!w) continue;
        append(r.workers, k, w);
        const c = w.createToClaim;
        log(
          `${tag} idle workers ${SERVER_LABELS[k]}: ${w.waiting}/${w.claims} claims waiting, ${w.answeredEarly} answered early, ` +
            `RSS ${w.quietRssMb.toFixed(1)} → ${w.waitingRssMb.toFixed(1)} MB (${(w.bytesPerClaim / 1024).toFixed(1)} KB per claim), ` +
            `live heap ${w.heapMb.toFixed(1)} MB + ${(w.heapBytesPerClaim / 1024).toFixed(1)} KB per claim, ` +
            `server CPU ${w.quietCpu.toFixed(3)} quiet, ${w.waitingCpu.toFixed(3)} waiting` +
            (c
              ? `; create → claimed p50 ${ms(c.p50Ms)} ms p99 ${ms(c.p99Ms)} ms (n ${c.n}), ` +
                `the create answered p50 ${ms(percentile(c.createdSamplesMs, 50))} ms`
              : '') +
            (w.error ? ` (${w.error})` : ''),
        );
      }
  }

  if (o.scenarios.has('artifact'))
    for (const k of ARTIFACT_KINDS.filter((x) => withPostgres || !isPostgres(x))) {
      log(`large artifact ${SERVER_LABELS[k]}: exporting ${o.artifactRows.toLocaleString('en')} rows`);
      const a = await attempt(r, 'artifact', `large artifact ${k}`, () =>
        largeArtifact(k, {
          rows: o.artifactRows,
          chunkRows: o.artifactChunkRows,
          rounds: o.rounds,
          load,
          warmBaseline: !o.smoke,
        }),
      );
      if (!a) continue;
      r.artifact[k] = a;
      const d = medianDownload(a.downloads);
      log(
        `large artifact ${SERVER_LABELS[k]}: ${(a.bytes / 2 ** 20).toFixed(0)} MiB written in ${a.writeS.toFixed(1)} s ` +
          `(${a.writeMibPerS.toFixed(1)} MiB/s), downloaded at ${d?.mibPerS.toFixed(0)} MiB/s; RSS ${a.rssMb.before.toFixed(0)} MB before, ` +
          `peaks ${a.rssMb.writePeak.toFixed(0)} writing / ${a.rssMb.loadPeak.toFixed(0)} loads / ${a.rssMb.downloadPeak.toFixed(0)} downloads`,
      );
    }

  if (o.scenarios.has('fairness')) {
    const sizes = o.smoke
      ? {
          floodJobs: 300,
          longMs: 600,
          shortJobs: 15,
          shortEveryMs: 100,
          claimQueues: [1000, 20_000],
          claims: 30,
        }
      : {
          floodJobs: 10_000,
          longMs: 4000,
          shortJobs: 60,
          shortEveryMs: 300,
          claimQueues: [1000, 1_000_000],
          // claims x 16 stays below the smaller queue: every claim measured finds 16 tasks
          claims: 60,
        };
    log(
      `fairness: ${sizes.floodJobs} long jobs of one tenant, ${sizes.shortJobs} short ones of another, 16 slots`,
    );
    const f = await attempt(r, 'fairness', 'fairness', () =>
      fairness({ ...sizes, slots: 16, postgresUrl: withPostgres ? o.postgresUrl : undefined }),
    );
    if (f) {
      r.fairness = f;
      for (const x of f) {
        log(
          `fairness ${x.store}: short jobs waited p50 ${x.wait.p50} ms, p99 ${x.wait.p99} ms (max ${x.wait.max}, n ${x.wait.n}); ` +
            x.claimRate
              .map(
                (c) =>
                  `${c.queued.toLocaleString('en')} queued: ${c.claimsPerS} claims/s, p50 ${c.p50Ms} ms, p99 ${c.p99Ms} ms`,
              )
              .join('; '),
        );
      }
    }
  }

  if (o.scenarios.has('flood')) {
    // 10,000 creates and 11,000 webhook configs take the flooder some 20 s a round; the smoke run's
    // bound is smaller so that the whole scenario takes seconds
    const sizes = o.smoke
      ? { maxActiveTasks: 300, pushTasks: 20 }
      : { maxActiveTasks: DEFAULT_BOUNDS.maxActiveTasks, pushTasks: 1000 };
    log(
      `flood: one key takes ${sizes.maxActiveTasks} tasks, ${DEFAULT_BOUNDS.maxStreams} streams and ` +
        `${DEFAULT_BOUNDS.maxPushConfigs} webhooks on each of ${sizes.pushTasks} tasks; another's creates and polls timed beside it`,
    );
    const f = await attempt(r, 'flood', 'flood', () =>
      flood({
        ...sizes,
        rounds: o.rounds,
        perS: 50,
        warmupS: o.warmupS,
        durationS: o.durationS,
        pollTasks: o.pollTasks,
        retryInFlight: 1,
        quietWaitS: o.quietWaitS,
      }),
    );
    if (f) {
      r.flood = f;
      const s = summariseFlood(f);
      const line = (what: string, x: FloodSummary['create']) =>
        (['p50', 'p99'] as const)
          .map(
            (p) =>
              `${what} ${p} ${ms(x.quiet[p])} → ${ms(x.held[p])} → ${ms(x.flooded[p])} ms ${ratio(x.flooded[p], x.quiet[p])}`,
          )
          .join(', ');
      const refused = (x: Record<string, number>, code: string) =>
        `${x[code] ?? 0} of ${Object.values(x).reduce((a, n) => a + n, 0)}`;
      log(
        `flood: the quiet tenant alone → beside the flood holding its bounds → holding and retrying: ${line('create', s.create)}; ${line('poll', s.poll)}`,
      );
      log(
        `flood: the flooder's retries refused: creates ${refused(s.retried.creates, REFUSED.tasks)}, ` +
          `streams ${refused(s.retried.streams, REFUSED.streams)}, webhook configs ${refused(s.retried.pushConfigs, REFUSED.pushConfigs)}`,
      );
    }
  }

  if (o.profile) r.profiles = await profiles(r, o, load, stores, withPostgres);
  stores = [];
  r.elapsedS = (performance.now() - started) / 1000;
  stampSections(r);
  // what this run itself measured, before anything saved is added
  if (o.smoke) checkEverythingRan(r, loadKinds);

  const saved = resultsPath(o.out);
  keepSaved(r, saved);
  const sections = [
    targetsTable(r),
    jobTargetsTable(r),
    loadTable(r),
    fanoutTable(r),
    retainedTable(r),
    pushTable(r),
    e2eTable(r),
    timelineTable(r),
    workersTable(r),
    artifactTargetsTable(r),
    artifactTable(r),
    artifactLatencyTable(r),
  ];
  console.log(`\n${sections.join('\n\n')}\n`);
  saveResults(saved, r);
  writeReport(o.out, renderDocument(r));
  log(`report written to ${o.out}; the run took ${r.elapsedS.toFixed(0)} s; results saved in ${saved}`);
}

/**
 * Checks once whether PostgreSQL answers; without it the pg kinds are skipped (one log line), so
 * that the smoke run passes on a machine that has none.
 */
async function postgres(r: Results, o: Options): Promise<boolean> {
  const skipped = POSTGRES_KINDS.join(', ');
  if (!o.postgresUrl) {
    r.machine.postgres = { description: `not used (--postgres off): ${skipped} not measured`, settings: {} };
    log(`--postgres off: skipping ${skipped}`);
    return false;
  }
  const probe = await probePostgres(o.postgresUrl);
  if (!probe.reachable) {
    r.machine.postgres = { description: `${probe.why}: ${skipped} not measured`, settings: {} };
    log(`${probe.why}: skipping ${skipped}`);
    return false;
  }
  usePostgres(o.postgresUrl);
  r.machine.postgres = { description: probe.description, settings: probe.settings };
  log(probe.description);
  return true;
}

/**
 * A run that left sections out (--only, --no-profile) keeps them from the results saved beside the
 * report by an earlier run of the same kind (smoke or not), each still naming the run it came from.
 */
function keepSaved(r: Results, path: string): void {
  if (!existsSync(path)) return;
  let saved: Results;
  try {
    saved = loadResults(path);
  } catch (err) {
    log(`not keeping anything from ${path}: ${(err as Error).message}`);
    return;
  }
  if (saved.options.smoke !== r.options.smoke) return;
  const kept = keepUnmeasured(r, saved);
  if (kept.length) log(`kept from ${path} (not measured by this run): ${kept.join('; ')}`);
}

async function profiles(
  r: Results,
  o: Options,
  load: Load,
  stores: SeededStore[],
  withPostgres: boolean,
): Promise<ProfileSummary[]> {
  const out: ProfileSummary[] = [];
  const add = async (
    label: string,
    setup: (url: string) => Promise<() => string>,
    target?: ProfileTarget,
  ) => {
    log(`profiling taskhandle: ${label}`);
    const p = await attempt(r, profileKey(label), `profile ${label}`, () =>
      profileLoad(label, load, setup, target),
    );
    if (p) out.push(p);
  };
  await add('create (fresh store)', async () => sendBody());
  await add(`poll (${o.pollTasks} tasks, 16 running, the rest queued)`, async (url) =>
    roundRobin(await createTasks(url, o.pollTasks)),
  );
  if (withPostgres) {
    const pg = { kind: 'taskhandle-pg' } as const;
    await add('create on PostgreSQL, 1 instance (fresh schema)', async () => sendBody(), pg);
    await add(
      `poll on PostgreSQL, 1 instance (${o.pollTasks} tasks, 16 running, the rest queued)`,
      async (url) => roundRobin(await createTasks(url, o.pollTasks)),
      pg,
    );
  }
  const largest = stores.filter((s) => s.kind === 'taskhandle').sort((a, b) => b.size - a.size)[0];
  if (largest) {
    for (const what of ['poll', 'create'] as const) {
      const path = freshDbPath('profile-retained');
      copyDb(largest.path, path);
      const setup = async () => (what === 'poll' ? roundRobin(largest.pollIds) : sendBody());
      await add(`${what} at ${largest.size.toLocaleString('en')} stored tasks`, setup, {
        kind: 'taskhandle',
        dbPath: path,
      });
    }
  }
  return out;
}

/** Runs one measurement; a failure is logged and reported (under its section), and the run goes on. */
async function attempt<T>(
  r: Results,
  section: string,
  what: string,
  run: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await run();
  } catch (err) {
    const message = `${what}: ${(err as Error).message.split('\n')[0]}`;
    log(`FAILED ${message}`);
    // the rest (a server's last output) goes to the terminal only
    const detail = (err as Error).message.split('\n').slice(1).join('\n').trim();
    if (detail) console.error(detail);
    r.errors.push({ section, message });
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
      `server CPU ${m.serverCpu.toFixed(2)}, ${m.databaseCpu === undefined ? '' : `PostgreSQL CPU ${m.databaseCpu.toFixed(2)}, `}client CPU ${m.clientCpu.toFixed(2)}, other CPU ${m.otherCpu.toFixed(2)}` +
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
