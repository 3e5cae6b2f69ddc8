import { ROOT_CONTEXT, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ATTR, activeCarrier, CREATED_BY, inSpan, linkTo, type TraceCarrier } from './tracing.js';

/** One webhook delivery attempt, as its span knows it: no token, credentials, body or query string. */
export interface DeliveryAttempt {
  taskId: string;
  configId: string;
  /** Attempts so far, this one included. */
  attempt: number;
  url: URL;
  /** The creating span of the task (its row keeps it). */
  trace: TraceCarrier | undefined;
}

/**
 * A delivery attempt as a client span of a trace of its own, linked to the span that created the
 * task (deliveries come from the outbox, long after any request). The webhook request carries the
 * span's `traceparent` (and `tracestate`), given to `post` as headers to add: a receiver that traces
 * continues the trace.
 */
export function traceDelivery<R extends { ok: boolean; status?: number }>(
  d: DeliveryAttempt,
  post: (traceHeaders: Record<string, string>) => Promise<R>,
): Promise<R> {
  return inSpan(
    'deliver_push',
    {
      kind: SpanKind.CLIENT,
      parent: ROOT_CONTEXT,
      links: linkTo(d.trace, CREATED_BY),
      attributes: {
        'http.request.method': 'POST',
        'server.address': d.url.hostname,
        'server.port': Number(d.url.port) || (d.url.protocol === 'https:' ? 443 : 80),
        'url.scheme': d.url.protocol.replace(':', ''),
        [ATTR.taskId]: d.taskId,
        'taskhandle.push.config_id': d.configId,
        'taskhandle.push.attempt': d.attempt,
      },
    },
    async (span) => {
      const carrier = activeCarrier();
      const result = await post(carrier ? { ...carrier } : {});
      if (result.status !== undefined) span.setAttribute('http.response.status_code', result.status);
      if (!result.ok) {
        span.setAttribute(
          'error.type',
          result.status === undefined ? 'delivery_failed' : String(result.status),
        );
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return result;
    },
  );
}
