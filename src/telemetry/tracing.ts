import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { carrierOf, parseTraceparent, type TraceCarrier } from './trace-context.js';

/**
 * The one door to `@opentelemetry/api` for the engine and the faces. Without an SDK registered
 * (telemetry/sdk.ts registers one only when OTEL_* variables ask for it) every call here is the API's
 * no-op: a span whose context is invalid, which {@link inSpan} notices and then runs the work bare,
 * so that a server without tracing pays one object per traced operation and nothing per request
 * path beyond it.
 */

export type { TraceCarrier } from './trace-context.js';
export type { Span };
export { SpanKind };

const tracer = trace.getTracer('taskhandle');

/** Attribute names: the OpenTelemetry GenAI agent conventions where they fit, ours (`taskhandle.*`) beside. */
export const ATTR = {
  operation: 'gen_ai.operation.name',
  agentName: 'gen_ai.agent.name',
  conversation: 'gen_ai.conversation.id',
  taskId: 'taskhandle.task.id',
  skill: 'taskhandle.skill',
  state: 'taskhandle.task.state',
  attempt: 'taskhandle.task.attempt',
} as const;

/** The attribute of a link to the span that created a task (runs, deliveries and answers carry one). */
export const CREATED_BY = { 'taskhandle.link': 'created_by' } as const;

let agentName: string | undefined;

/** The agent's name as its card gives it: `gen_ai.agent.name` of the spans that run its jobs. */
export function setAgentName(name: string | undefined): void {
  agentName = name || undefined;
}

export const currentAgentName = (): string | undefined => agentName;

/** The context a caller's trace carrier names, as the parent of the spans its request makes. */
export function remoteContext(carrier: Partial<TraceCarrier> | undefined): Context | undefined {
  const parent = parseTraceparent(carrier?.traceparent, carrier?.tracestate);
  return parent && trace.setSpanContext(ROOT_CONTEXT, parent);
}

/** The active span's carrier, if a span is being recorded or propagated here: to keep or to send on. */
export function activeCarrier(): TraceCarrier | undefined {
  const span = trace.getActiveSpan();
  const ctx = span?.spanContext();
  return ctx && isSpanContextValid(ctx) ? carrierOf(ctx) : undefined;
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent; default the active context. */
  parent?: Context;
  /** Spans this one follows from without being their child (a job run and its task's creation). */
  links?: Link[];
}

/**
 * Runs `work` inside a new span, active for everything `work` starts, and ends the span when `work`
 * settles (a throw is recorded as the span's error, then rethrown). Without an SDK the span is a
 * no-op and `work` runs as it would untraced.
 *
 * @example const view = await inSpan('create_task', { attributes: { [ATTR.skill]: skill } }, (span) => create(span));
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    { kind: options.kind, attributes: options.attributes, links: options.links },
    parent,
  );
  if (!isSpanContextValid(span.spanContext())) return work(span);
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Starts a span that the caller ends (a request that outlives its handler: a stream); `undefined`
 * when nothing would record or carry it, so that callers skip their bookkeeping.
 */
export function startSpan(name: string, options: SpanOptions): { span: Span; context: Context } | undefined {
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    { kind: options.kind, attributes: options.attributes, links: options.links },
    parent,
  );
  if (!isSpanContextValid(span.spanContext())) return undefined;
  return { span, context: trace.setSpan(parent, span) };
}

/** A link to the span a carrier names (the creating span of a task), if it names one. */
export function linkTo(carrier: Partial<TraceCarrier> | undefined, attributes?: Attributes): Link[] {
  const to = parseTraceparent(carrier?.traceparent, carrier?.tracestate);
  return to ? [{ context: to, attributes }] : [];
}

/** Records an error on a span by its kind only: messages may quote what callers sent. */
export function failed(span: Span, err: unknown): void {
  const type = err instanceof Error ? (((err as { code?: unknown }).code as string) ?? err.name) : typeof err;
  span.setAttribute('error.type', String(type));
  span.setStatus({ code: SpanStatusCode.ERROR });
}
