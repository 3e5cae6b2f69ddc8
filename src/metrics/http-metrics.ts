import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Refusal } from '../faces/http/admission.js';
import { isStream, openStreams } from '../faces/http/open-streams.js';

/** Where each face is served (server/http.ts FACE_PATHS), to name a request's face by its path. */
export interface FacePrefixes {
  a2aRest: string;
  jobs: string;
  inbox: string;
  mcp: string;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'other'] as const;
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

type RequestCounter = Counter<'face' | 'method' | 'status'>;
type Method = (typeof METHODS)[number];

/** The series of one face and method: its latency, and its request count by status. */
interface Series {
  face: string;
  method: Method;
  latency: Histogram.Internal<'face' | 'method'>;
  byStatus: Map<number, Counter.Internal>;
}

/**
 * The faces' metrics: requests by face, method and status with their latency, streams open now,
 * and admission refusals. Labels are the face (named from the path's first segment), the HTTP method
 * and the status: never a path, an id or a principal. Per request it costs a clock read, one
 * listener and the counter updates: every label set's series is looked up without building strings.
 */
export class HttpMetrics {
  readonly #faces: readonly (readonly [prefix: string, face: string])[];
  readonly #requests: RequestCounter;
  readonly #latency: Histogram<'face' | 'method'>;
  readonly #auth: Counter<'kind'>;
  readonly #refusals: Counter<'reason'>;
  /** Per face, its series by method (indexed as METHODS). */
  readonly #series = new Map<string, Series[]>();

  constructor(registry: Registry, refusals: Counter<'reason'>, faces: FacePrefixes) {
    const registers = [registry];
    this.#refusals = refusals;
    this.#faces = [
      [faces.a2aRest, 'a2a-rest'],
      [faces.jobs, 'jobs'],
      [faces.inbox, 'inbox'],
      [faces.mcp, 'mcp'],
      ['/.well-known/', 'well-known'],
      ['/healthz', 'health'],
      ['/metrics', 'metrics'],
    ];
    this.#requests = new Counter({
      name: 'taskhandle_http_requests_total',
      help: 'HTTP requests answered by this instance, by face, method and status',
      labelNames: ['face', 'method', 'status'],
      registers,
    });
    this.#latency = new Histogram({
      name: 'taskhandle_http_request_duration_seconds',
      help: 'HTTP request to the end of its answer, by face and method (streams excluded: their length is the client’s)',
      labelNames: ['face', 'method'],
      buckets: SECONDS,
      registers,
    });
    new Gauge({
      name: 'taskhandle_open_streams',
      help: 'Streams open now on this instance: SSE responses of every face, gRPC server streams',
      labelNames: ['kind'],
      registers,
      collect() {
        this.set({ kind: 'sse' }, openStreams.sse);
        this.set({ kind: 'grpc' }, openStreams.grpc);
      },
    });
    this.#auth = new Counter({
      name: 'taskhandle_auth_failures_total',
      help: 'Requests refused for their credentials: no-credentials, not-bearer, unknown-key, invalid-token',
      labelNames: ['kind'],
      registers,
    });
  }

  /** Counts `res` when it closes; call as the request arrives. */
  track(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    const series = this.#seriesOf(this.#faceOf(req), methodOf(req.method));
    res.on('close', () => {
      let counter = series.byStatus.get(res.statusCode);
      if (!counter) {
        counter = this.#requests.labels(series.face, series.method, String(res.statusCode));
        series.byStatus.set(res.statusCode, counter);
      }
      counter.inc();
      if (!isStream(res)) series.latency.observe((performance.now() - started) / 1000);
    });
  }

  /** Hears admission's refusals (faces/http/admission.ts). */
  readonly refused = (refusal: Refusal): void => {
    if (refusal.auth) this.#auth.inc({ kind: refusal.auth });
    if (refusal.kind === 'rate-limited') this.#refusals.inc({ reason: 'rate-limited' });
  };

  #faceOf(req: IncomingMessage): string {
    const url = req.url ?? '';
    if (url === '/' || url.startsWith('/?')) return req.method === 'POST' ? 'a2a-jsonrpc' : 'home';
    for (const [prefix, face] of this.#faces) if (url.startsWith(prefix)) return face;
    return 'other';
  }

  #seriesOf(face: string, method: Method): Series {
    let byMethod = this.#series.get(face);
    if (!byMethod) {
      byMethod = [];
      this.#series.set(face, byMethod);
    }
    const i = METHODS.indexOf(method);
    let series = byMethod[i];
    if (!series) {
      series = { face, method, latency: this.#latency.labels(face, method), byStatus: new Map() };
      byMethod[i] = series;
    }
    return series;
  }
}

const methodOf = (method: string | undefined): Method =>
  (METHODS as readonly string[]).includes(method ?? '') ? (method as Method) : 'other';
