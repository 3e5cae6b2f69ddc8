import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import { isLoopback } from '../auth/open.js';
import { ConfigError } from '../config/error.js';
import { EngineMetrics } from './engine-metrics.js';
import { type FacePrefixes, HttpMetrics } from './http-metrics.js';
import { PushMetrics } from './push-metrics.js';
import { type StoreGaugeSources, storeGauges } from './store-gauges.js';

/**
 * This instance's Prometheus metrics (docs/metrics.md): one registry, and the observers the engine,
 * the push dispatcher and the HTTP server report to. Built only when the settings turn metrics on:
 * off, nothing of it runs.
 */
export interface Metrics {
  registry: Registry;
  engine: EngineMetrics;
  push: PushMetrics;
  http: HttpMetrics;
  /** Adds the gauges read at scrape time, once the store and the runner exist. */
  watch(sources: StoreGaugeSources): void;
}

/** How the metrics are served: METRICS_PORT on HOST (optional), METRICS_TOKEN (optional). */
export interface MetricsListen {
  host: string;
  port?: number;
  token?: string;
}

/**
 * The metrics the settings turn on (METRICS_TOKEN, METRICS_PORT). A listener on an address other
 * machines reach must ask for a token: counts by skill and state are the operator's business.
 * `faces`: where the composition root mounts the faces, to name a request's face by its path.
 */
export function openMetrics(listen: MetricsListen, faces: FacePrefixes): Metrics {
  if (listen.port !== undefined && listen.token === undefined && !isLoopback(listen.host))
    throw new ConfigError(
      `METRICS_PORT=${listen.port}: HOST=${listen.host} is reachable from other machines; set METRICS_TOKEN (Prometheus sends it as a bearer token, docs/metrics.md) or serve on a loopback HOST`,
    );
  const registry = new Registry();
  // Event loop lag, heap, GC, handles, CPU: the Node process as every Node exporter names it.
  collectDefaultMetrics({ register: registry });
  const refusals = new Counter({
    name: 'taskhandle_refusals_total',
    help: 'Requests refused for a limit: rate-limited (RATE_LIMIT_PER_S), active-tasks (MAX_ACTIVE_TASKS), storage-quota (MAX_STORED_BYTES)',
    labelNames: ['reason'],
    registers: [registry],
  });
  // Every reason from the start: an alert's rate() needs the series before the first refusal.
  for (const reason of ['rate-limited', 'active-tasks', 'storage-quota']) refusals.inc({ reason }, 0);
  return {
    registry,
    engine: new EngineMetrics(registry, refusals),
    push: new PushMetrics(registry),
    http: new HttpMetrics(registry, refusals, faces),
    watch: (sources) => storeGauges(registry, sources),
  };
}
