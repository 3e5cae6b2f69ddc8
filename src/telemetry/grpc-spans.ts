import type { Metadata } from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { inSpan, remoteContext } from './tracing.js';

interface AnyCall {
  metadata: Metadata;
  getPath(): string;
}

type Handler = (call: AnyCall, callback?: (err: unknown, value?: unknown) => void) => unknown;

/**
 * The service's handlers, each serving its call inside a server span (`lf.a2a.v1.A2AService/SendMessage`),
 * the child of the `traceparent` metadata when the caller sent a valid one. A unary call's span ends
 * when its answer goes out (an error with its gRPC status code), a stream's when the stream ends.
 *
 * @example server.addService(A2AService, tracedService(grpcService({ ... })));
 */
export function tracedService<T extends object>(service: T): T {
  const traced: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(service)) {
    traced[name] = typeof handler === 'function' ? tracedHandler(handler as Handler) : handler;
  }
  return traced as T;
}

function tracedHandler(handler: Handler): Handler {
  return (call, callback) => {
    const first = (key: string) => {
      const value = call.metadata.get(key)[0];
      return typeof value === 'string' ? value : undefined;
    };
    const parent = remoteContext({ traceparent: first('traceparent'), tracestate: first('tracestate') });
    const path = call.getPath().replace(/^\//, '');
    const slash = path.lastIndexOf('/');
    return inSpan(
      path,
      {
        kind: SpanKind.SERVER,
        parent: parent ?? ROOT_CONTEXT,
        attributes: {
          'rpc.system': 'grpc',
          'rpc.service': path.slice(0, slash),
          'rpc.method': path.slice(slash + 1),
        },
      },
      async (span) => {
        const answered =
          callback &&
          ((err: unknown, value?: unknown) => {
            const code = (err as { code?: unknown } | null)?.code;
            span.setAttribute('rpc.grpc.status_code', typeof code === 'number' ? code : 0);
            if (err) span.setStatus({ code: SpanStatusCode.ERROR });
            callback(err, value);
          });
        await handler(call, answered);
      },
    );
  };
}

/**
 * Whether a handler runs inside a span that records: a stream's handler then returns a promise
 * settled at the stream's end, which the span waits for (an idle stream holds none otherwise).
 */
export const spanRecording = (): boolean => trace.getActiveSpan()?.isRecording() === true;
