import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Refusal } from '../faces/http/admission.js';
import { isStream, openStreams } from '../faces/http/open-streams.js';
import { PlainCount, PlainHistogram, plainCounter, plainHistogram } from './plain-series.js';

/** Where each face is served (server/face-paths.ts, given by the composition root), to name a request's face by its path. */
export interface FacePrefixes {
  a2aRest: string;
  jobs: string;
  workers: string;
  inbox: string;
  mcp: string;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'other'] as const;
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

type Method = (typeof METHODS)[number];

/** The series of one face and method: its latency, and its request count by status. */
interface Series {
  face: string;
  method: Method;
  latency: PlainHistogram;
  byStatus: Map<number, PlainCount>;
}

/**
 * The faces' metrics: requests by face, method and status with their latency, streams open now,
 * and admission refusals. Labels are the face (named from the path's first segment), the HTTP method
 * and the status: never a path, an id or a principal. Per request it costs two clock reads, one
 * listener, and a few additions to series found without building a string (plain-series.ts).
 */
export class HttpMetrics {
  readonly #faces: readonly (readonly [prefix: string, face: string])[];
  readonly #auth: Counter<'kind'>;
  readonly #refusals: Counter<'reason'>;
  /** Per face, its series by method (indexed as METHODS). */
  readonly #series = new Map<string, Series[]>();

  constructor(registry: Registry, refusals: Counter<'reason'>, faces: FacePrefixes) {
    const registers = [registry];
    this.#refusals = refusals;
    this.#faces = [
      [faces.a2aRest, 'a2a-rest'],
      // Before jobs: its prefix is within theirs.
      [faces.workers, 'workers'],
      [faces.jobs, 'jobs'],
      [faces.inbox, 'inbox'],
      [faces.mcp, 'mcp'],
      ['/.well-known/', 'well-known'],
      ['/healthz', 'health'],
      ['/metrics', 'metrics'],
    ];
    const all = () => [...this.#series.values()].flat().filter((s) => s !== undefined);
    plainCounter(
      registry,
      'taskhandle_http_requests_total',
      'HTTP requests answered by this instance, by face, method and status',
      () => all().flatMap((s) => [...s.byStatus.values()]),
    );
    plainHistogram(
      registry,
      'taskhandle_http_request_duration_seconds',
      'HTTP request to the end of its answer, by face and method (streams excluded: their length is the client’s)',
      () => all().map((s) => s.latency),
    );
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
      let count = series.byStatus.get(res.statusCode);
      if (!count) {
        count = new PlainCount({ face: series.face, method: series.method, status: String(res.statusCode) });
        series.byStatus.set(res.statusCode, count);
      }
      count.value++;
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
      series = { face, method, latency: new PlainHistogram({ face, method }, SECONDS), byStatus: new Map() };
      byMethod[i] = series;
    }
    return series;
  }
}

const methodOf = (method: string | undefined): Method =>
  (METHODS as readonly string[]).includes(method ?? '') ? (method as Method) : 'other';
