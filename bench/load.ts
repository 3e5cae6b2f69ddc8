import autocannon from 'autocannon';
import { fireGrpc, type Tally } from './grpc-load.js';
import { cpuBetween } from './postgres.js';
import { machineBusySeconds, waitForQuiet } from './proc-stats.js';
import { RPC_HEADERS } from './rpc.js';
import { scrapeWhile } from './scraper.js';
import type { RunningServer } from './servers/launch.js';

export interface LoadOptions {
  connections: number;
  durationS: number;
  /** Unmeasured load first, same shape, so that the measurement sees a warmed-up server. */
  warmupS: number;
  /** Wait up to this long for the machine to be idle before starting (0: start at once). */
  quietWaitS: number;
  /** Measure again, up to this many times, when other processes took more than 0.3 cores meanwhile. */
  retries: number;
  /** The body of each request, built per request (unique ids, round-robin task ids). */
  body: () => string;
  /** A request other than `POST /` JSON-RPC: a GET of `path` (the body is then not sent). */
  get?: string;
  /** The path JSON-RPC bodies are POSTed to (default `/`; `/mcp` for the MCP face). */
  post?: string;
  /** Sent with every request (credentials). */
  headers?: Record<string, string>;
  /** Headers that depend on the body (MCP 2026-07-28's routing headers repeat its method and name). */
  headersOf?: (body: string) => Record<string, string>;
  /**
   * `refusal`: the expected answer is a refusal (a JSON-RPC error, or a 404 to a GET), counted as
   * the request's success; anything else (an answer that shows the task) is a failure.
   */
  expect?: 'answer' | 'refusal';
}

export interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Connection errors, timeouts, non-2xx answers and JSON-RPC errors: a valid run has none. */
  failures: number;
  /** CPU used by the server process (summed over its instances) / wall time (1.0 = one core busy). */
  serverCpu: number;
  /** PostgreSQL kinds: CPU of the database processes serving it / wall time (see DatabaseMeter). */
  databaseCpu?: number;
  /** CPU used by this process (the load generator) / wall time. */
  clientCpu: number;
  /** CPU used by every other process on the machine / wall time: near 0 on a quiet machine. */
  otherCpu: number;
  /** Server resident memory at the end of the measurement (summed over its instances). */
  serverRssMb: number;
  /** When the measured load ran, in CLOCK_MONOTONIC microseconds (the clock of V8's CPU profiles). */
  windowUs: [number, number];
}

const DISTURBED_CORES = 0.3;

/**
 * Runs autocannon against one server: POST / with a JSON-RPC body, keep-alive, no pipelining; a server
 * of several instances gets the connections round-robin (16 each of 32 for two), in one autocannon run,
 * so that requests are counted together and latency percentiles are over all of them. On a
 * shared machine, a measurement that other processes disturbed is repeated; the least disturbed one
 * is kept (all of them are one server process's figures, so they compare).
 */
export async function measure(server: RunningServer, o: LoadOptions): Promise<LoadResult> {
  let best: LoadResult | undefined;
  for (let attempt = 0; attempt <= o.retries; attempt++) {
    const m = await measureOnce(server, o);
    if (!best || m.otherCpu < best.otherCpu) best = m;
    if (best.otherCpu <= DISTURBED_CORES) break;
  }
  return best as LoadResult;
}

async function measureOnce(server: RunningServer, o: LoadOptions): Promise<LoadResult> {
  if (o.quietWaitS > 0) await waitForQuiet(o.quietWaitS, () => server.cpuSeconds(), DISTURBED_CORES);
  if (o.warmupS > 0) await fire(server, o.connections, o.warmupS, o);
  const db0 = await server.databaseCpu?.();
  const cpu0 = process.cpuUsage();
  const serverCpu0 = server.cpuSeconds();
  const machine0 = machineBusySeconds();
  const startUs = monotonicUs();
  const t0 = performance.now();
  // The metrics kind is scraped as the load runs: its cost is the counting and the scrapes.
  const scraping = server.kind === 'taskhandle-metrics' ? scrapeWhile(server.url) : undefined;
  const r: Tally = await fire(server, o.connections, o.durationS, o);
  const wall = (performance.now() - t0) / 1000;
  await scraping?.();
  const cpu = process.cpuUsage(cpu0);
  const serverCpu = (server.cpuSeconds() - serverCpu0) / wall;
  const machine = machineBusySeconds() - machine0;
  const db1 = await server.databaseCpu?.();
  const databaseCpu = db0 && db1 ? cpuBetween(db0, db1) / wall : undefined;
  const clientCpu = (cpu.user + cpu.system) / 1e6 / wall;
  // a refused GET is a 404 (its body is not read); anything else is judged as above
  const good =
    o.get && o.expect === 'refusal' ? (r.statusCodeStats?.['404']?.count ?? 0) : r['2xx'] - r.mismatches;
  const answered = r['2xx'] + r.non2xx;
  const crash = server.crashed();
  if (crash) throw new Error(crash);
  return {
    rps: good / r.duration,
    // autocannon reports 0 ms when nothing answered: that is no latency at all, not a fast one
    p50Ms: good > 0 ? r.latency.p50 : Number.NaN,
    p99Ms: good > 0 ? r.latency.p99 : Number.NaN,
    requests: good,
    failures: r.errors + answered - good,
    serverCpu,
    ...(databaseCpu === undefined ? {} : { databaseCpu }),
    clientCpu,
    otherCpu: Math.max(0, machine / wall - serverCpu - clientCpu - (databaseCpu ?? 0)),
    serverRssMb: server.rssBytes() / 2 ** 20,
    windowUs: [startUs, monotonicUs()],
  };
}

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** The load: over gRPC for the gRPC kind, else autocannon's HTTP/1.1. */
function fire(server: RunningServer, connections: number, durationS: number, o: LoadOptions): Promise<Tally> {
  return server.grpcTarget
    ? fireGrpc(server.grpcTarget, connections, durationS, o.body)
    : fireHttp(server.urls, connections, durationS, o);
}

function fireHttp(urls: string[], connections: number, durationS: number, o: LoadOptions) {
  const refusal = o.expect === 'refusal';
  return autocannon({
    // autocannon takes a list too (connection i goes to urls[i % n]); its types know only one
    url: (urls.length === 1 ? urls[0] : urls) as string,
    connections,
    duration: durationS,
    requests: [
      o.get
        ? { method: 'GET', path: o.get, headers: { ...o.headers } }
        : {
            method: 'POST',
            path: o.post ?? '/',
            headers: { ...RPC_HEADERS, ...o.headers },
            setupRequest: (req) => {
              const body = o.body();
              return o.headersOf
                ? { ...req, body, headers: { ...req.headers, ...o.headersOf(body) } }
                : { ...req, body };
            },
          },
    ],
    // A JSON-RPC error is an HTTP 200: count it, or a fast error path would pass for a fast server
    // (and a refusal that shows the task would pass for a refusal). A GET is judged by its status.
    ...(o.get ? {} : { verifyBody: (b: unknown) => String(b).includes('"error"') === refusal }),
  });
}
