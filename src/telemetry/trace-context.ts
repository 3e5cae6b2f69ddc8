import { createTraceState, type SpanContext, TraceFlags } from '@opentelemetry/api';

/**
 * A span's context in W3C Trace Context form, as it travels in headers (`traceparent`,
 * `tracestate`), MCP `_meta`, gRPC metadata, and the task row (the creating span of a task, which
 * its job run links to, on whichever instance runs it).
 */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

// version-traceid-spanid-flags; a later version may append fields after another '-'.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** The W3C limit is 32 list members; a longer value is dropped whole rather than cut mid-member. */
const MAX_TRACESTATE_CHARS = 512;

/**
 * The remote span context a `traceparent` (and `tracestate`) names, or undefined for anything the
 * W3C Trace Context rules reject (an unknown version ff, all-zero ids, upper case, extra fields on
 * version 00): a bad header starts a new trace, it never fails the request.
 *
 * @example parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
 */
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): SpanContext | undefined {
  if (typeof traceparent !== 'string' || traceparent.length > 256) return undefined;
  const m = TRACEPARENT.exec(traceparent.trim());
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  const context: SpanContext = {
    traceId,
    spanId,
    traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  };
  if (typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= MAX_TRACESTATE_CHARS) {
    context.traceState = createTraceState(tracestate);
  }
  return context;
}

/** The carrier of a span context (version 00), to send on or to keep with a task. */
export function carrierOf(context: SpanContext): TraceCarrier {
  const flags = (context.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
  const carrier: TraceCarrier = { traceparent: `00-${context.traceId}-${context.spanId}-${flags}` };
  const state = context.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}

/** A header's value as one string: the first of a repeated header (Node joins none for traceparent). */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
