import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from './a2a.js';

/** One span as the receiver got it over OTLP/HTTP JSON: ids in hex, attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  /** The `service.name` of the resource that sent it. */
  service?: string;
  status?: { code?: number };
}

/**
 * A small OTLP/HTTP receiver on 127.0.0.1 (port 0): takes `POST /v1/traces` in the JSON encoding
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), no protobuf needed, and keeps every span.
 * @example
 *   const otlp = await startOtlpReceiver();
 *   const agent = await launch({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } });
 *   const [span] = await otlp.waitFor((s) => s.name === 'create_task');
 */
export interface OtlpReceiver {
  url: string;
  readonly spans: ReceivedSpan[];
  /** Waits until `count` spans match (15 s at most); resolves with them. */
  waitFor(match: (s: ReceivedSpan) => boolean, count?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: OtlpValue }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: { spans?: OtlpSpan[] }[];
  }[];
}

const scalar = (v: OtlpValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue ?? ''));

const flatten = (attributes: { key: string; value: OtlpValue }[] = []) =>
  Object.fromEntries(attributes.map((a) => [a.key, scalar(a.value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString()) as OtlpExport;
      for (const rs of body.resourceSpans ?? []) {
        const service = flatten(rs.resource?.attributes)['service.name'];
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              attributes: flatten(s.attributes),
              links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
              service: typeof service === 'string' ? service : undefined,
              status: s.status,
            });
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    waitFor: (match, count = 1) =>
      eventually(async () => {
        const found = spans.filter(match);
        return found.length >= count ? found : undefined;
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
