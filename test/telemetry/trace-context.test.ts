import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { tracingRequested } from '../../src/telemetry/sdk.js';
import { carrierOf, parseTraceparent } from '../../src/telemetry/trace-context.js';
import { activeCarrier, inSpan, remoteContext } from '../../src/telemetry/tracing.js';
import { call, harnessEach, submit } from '../engine-harness.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('parseTraceparent (W3C Trace Context, hostile input)', () => {
  it('reads a version-00 traceparent and its tracestate', () => {
    const parsed = parseTraceparent(`00-${TRACE}-${SPAN}-01`, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    expect(parsed).toMatchObject({ traceId: TRACE, spanId: SPAN, traceFlags: 1, isRemote: true });
    expect(parsed?.traceState?.get('congo')).toBe('t61rcWkgMzE');
    expect(carrierOf(parsed as NonNullable<typeof parsed>)).toEqual({
      traceparent: `00-${TRACE}-${SPAN}-01`,
      tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    });
  });

  it('keeps only the sampled flag, and reads a later version with fields appended', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-ff`)?.traceFlags).toBe(1);
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)?.traceFlags).toBe(0);
    expect(parseTraceparent(`cc-${TRACE}-${SPAN}-01-what-comes-next`)?.spanId).toBe(SPAN);
  });

  it.each([
    ['upper case', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with more fields', `00-${TRACE}-${SPAN}-01-extra`],
    ['a short trace id', `00-${TRACE.slice(1)}-${SPAN}-01`],
    ['garbage', 'not a traceparent'],
    ['empty', ''],
    ['a huge value', `00-${TRACE}-${SPAN}-01-${'x'.repeat(10_000)}`],
    ['a number', 42],
    ['an array', [`00-${TRACE}-${SPAN}-01`]],
  ])('refuses %s (a new trace starts instead)', (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  it('drops a tracestate past the W3C size rather than cut it', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`, `a=${'b'.repeat(600)}`)?.traceState).toBeUndefined();
  });
});

describe('tracingRequested: only the standard OTEL_* variables switch the SDK on', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }, true],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, false],
    [{ OTEL_SERVICE_NAME: 'x' }, false],
  ])('%o -> %s', (env, on) => {
    expect(tracingRequested(env)).toBe(on);
  });
});

describe('without an SDK (the default)', () => {
  const { t, open } = harnessEach();

  it('runs traced work bare and carries no context, even under a caller traceparent', async () => {
    const parent = remoteContext({ traceparent: `00-${TRACE}-${SPAN}-01` });
    const seen = await context.with(parent ?? context.active(), () =>
      inSpan('work', {}, async (span) => ({ recording: span.isRecording(), carrier: activeCarrier() })),
    );
    expect(seen).toEqual({ recording: false, carrier: undefined });
    expect(trace.getActiveSpan()).toBeUndefined();
  });

  it('keeps no trace context with a new task', async () => {
    const h = open({ skills: t.skills });
    const id = await submit(h.engine, call('quick', {}));
    expect((await h.engine.record('alice', id)).trace).toBeUndefined();
  });

  it('passes an error through inSpan unchanged', async () => {
    const err = new Error('nope');
    await expect(inSpan('work', {}, async () => Promise.reject(err))).rejects.toBe(err);
  });
});
