import { type LoadSummary, type Results, summarise, summariseFanout } from './results.js';
import type { E2eKind, E2eResult } from './scenarios/e2e.js';
import { median } from './stats.js';
import type { TargetRow } from './targets.js';

/**
 * The targets of issue 30 (the whole job fast), each beside its floor or anchor from the same run:
 * a figure measured on a different day or machine says nothing of this code.
 */

/** What a PostgreSQL create cost the database before issue 30, in µs (bench/BENCHMARKS.md, issue 20). */
const PG_CREATE_US_BEFORE = 245;

type E2e = { perS: number; p50Ms: number; p99Ms: number; cpuMsPerJob: number };

function e2eOf(r: Results, k: E2eKind): E2e | undefined {
  const list = r.e2e?.[k];
  if (!list?.length) return undefined;
  const m = (f: (e: E2eResult) => number) => median(list.map(f));
  return {
    perS: m((e) => e.perS),
    p50Ms: m((e) => e.p50Ms),
    p99Ms: m((e) => e.p99Ms),
    cpuMsPerJob: m((e) => (e.serverCpu / e.perS) * 1000),
  };
}

/** Core-µs of server CPU a request, over a load measurement. */
const cpuUsPerRequest = (s: LoadSummary | undefined) =>
  s && s.rps > 0 ? (s.serverCpu / s.rps) * 1e6 : undefined;

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const int = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? '?' : `${Math.round(n)}`);
/** A difference with its sign: +1.6, or -1.2 below the floor. */
const signed = (n: number): string => `${n >= 0 ? '+' : ''}${n.toFixed(1)}`;

export function jobTargets(r: Results): TargetRow[] {
  const rows: TargetRow[] = [];
  const row = (target: string, measured: string | undefined, met: boolean | undefined) =>
    rows.push(
      measured === undefined || met === undefined
        ? { target, measured: measured ?? '-', verdict: 'not measured' }
        : { target, measured, verdict: met ? 'met' : 'NOT MET' },
    );

  const sqlite = e2eOf(r, 'taskhandle');
  // the same job collected in one request: shown beside the target's figure, not judged
  const sendStream = e2eOf(r, 'taskhandle-send-stream');
  const postgres = e2eOf(r, 'taskhandle-pg');
  const graphile = e2eOf(r, 'graphile-worker');
  const boss = e2eOf(r, 'pg-boss');
  const floor = summarise(r.create.floor);
  const floorUs = cpuUsPerRequest(floor);

  // the floor comes from the create section: only a pair measured by the same run is compared
  const paired = r.sections.e2e === r.sections.create;
  row(
    'end to end, SQLite: server CPU a job <= 20× the node:http floor CPU a request',
    sqlite && floorUs
      ? `${((sqlite.cpuMsPerJob * 1000) / floorUs).toFixed(1)}× (${f2(sqlite.cpuMsPerJob)} ms a job vs ${int(floorUs)} µs a floor request)` +
          (paired ? '' : '; from different runs, not compared') +
          (sendStream
            ? `; one SendStreamingMessage a job: ${((sendStream.cpuMsPerJob * 1000) / floorUs).toFixed(1)}×, p50 ${f1(sendStream.p50Ms)} ms`
            : '')
      : undefined,
    sqlite && floorUs && paired ? sqlite.cpuMsPerJob * 1000 <= 20 * floorUs : undefined,
  );
  row(
    'end to end, SQLite: create → completed p50 <= 10 ms at 32 in flight',
    sqlite && `p50 ${f1(sqlite.p50Ms)} ms at ${int(sqlite.perS)} jobs/s`,
    sqlite && sqlite.p50Ms <= 10,
  );
  row(
    'end to end, SQLite: create → completed p99 <= 50 ms',
    sqlite && `p99 ${f1(sqlite.p99Ms)} ms`,
    sqlite && sqlite.p99Ms <= 50,
  );
  row(
    'end to end, PostgreSQL (1 instance): create → completed p50 <= 25 ms',
    postgres && `p50 ${f1(postgres.p50Ms)} ms at ${int(postgres.perS)} jobs/s`,
    postgres && postgres.p50Ms <= 25,
  );
  for (const [queue, anchor, min] of [
    ['graphile-worker', graphile, 1.5],
    ['pg-boss', boss, 3],
  ] as const)
    row(
      `end to end, PostgreSQL: jobs/s >= ${min}× ${queue} on the same database`,
      postgres && anchor
        ? `${(postgres.perS / anchor.perS).toFixed(2)}× (${int(postgres.perS)} vs ${int(anchor.perS)} jobs/s)`
        : undefined,
      postgres && anchor ? postgres.perS >= min * anchor.perS : undefined,
    );

  const create = summarise(r.create.taskhandle);
  const sqliteFloor = summarise(r.create['sqlite-floor']);
  row(
    'create >= 0.5× the node:http + SQLite floor',
    create && sqliteFloor
      ? `${(create.rps / sqliteFloor.rps).toFixed(2)}× (${int(create.rps)} vs ${int(sqliteFloor.rps)} req/s)`
      : undefined,
    create && sqliteFloor ? create.rps >= 0.5 * sqliteFloor.rps : undefined,
  );
  const pgCreate = summarise(r.create['taskhandle-pg']);
  const pgUs =
    pgCreate && Number.isFinite(pgCreate.databaseCpu)
      ? (pgCreate.databaseCpu / pgCreate.rps) * 1e6
      : undefined;
  row(
    `create on PostgreSQL: database CPU a create <= ${PG_CREATE_US_BEFORE / 2} µs (half of ${PG_CREATE_US_BEFORE} µs before)`,
    pgUs === undefined ? undefined : `${int(pgUs)} µs a create at ${int(pgCreate?.rps)} req/s`,
    pgUs === undefined ? undefined : pgUs <= PG_CREATE_US_BEFORE / 2,
  );

  const streams = summariseFanout(r.fanout.taskhandle);
  const floorStreams = summariseFanout(r.fanout.floor);
  row(
    "streams: memory per open stream <= the node:http floor's + 1 KB",
    streams && floorStreams
      ? `${signed((streams.bytesPerSubscriber - floorStreams.bytesPerSubscriber) / 1024)} KB (${int(streams.bytesPerSubscriber)} vs ${int(floorStreams.bytesPerSubscriber)} bytes a stream)`
      : undefined,
    streams && floorStreams
      ? streams.bytesPerSubscriber <= floorStreams.bytesPerSubscriber + 1024
      : undefined,
  );

  for (const [scenario, min] of [
    ['create', 0.7],
    ['poll', 0.5],
  ] as const) {
    const grpc = summarise(r[scenario]['taskhandle-grpc']);
    const rpc = summarise(r[scenario].taskhandle);
    row(
      `gRPC ${scenario} >= ${min}× JSON-RPC's`,
      // server CPU a call beside: less sensitive than req/s to what else the machine runs
      grpc && rpc
        ? `${(grpc.rps / rpc.rps).toFixed(2)}× (${int(grpc.rps)} vs ${int(rpc.rps)} req/s; server CPU ${int(cpuUsPerRequest(grpc))} vs ${int(cpuUsPerRequest(rpc))} µs a call)`
        : undefined,
      grpc && rpc ? grpc.rps >= min * rpc.rps : undefined,
    );
  }
  return rows;
}
