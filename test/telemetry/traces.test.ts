import { context, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { traceDelivery } from '../../src/telemetry/push-spans.js';
import { remoteContext, setAgentName } from '../../src/telemetry/tracing.js';
import { answer, call, harnessEach, submit, text, waitForState } from '../engine-harness.js';

/** The caller's span, as a W3C traceparent (a trace of theirs that our spans must join). */
const CALLER = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
const TRACEPARENT = `00-${CALLER.traceId}-${CALLER.spanId}-01`;

const exporter = new InMemorySpanExporter();
const sdk = new NodeSDK({
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  instrumentations: [],
  metricReaders: [],
  logRecordProcessors: [],
  autoDetectResources: false,
});

const spans = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);
const one = (name: string): ReadableSpan => {
  const found = spans(name);
  expect(found, `spans named ${name}`).toHaveLength(1);
  return found[0] as ReadableSpan;
};
/** Spans end just after the work they wrap settles: wait for the one we expect. */
async function ended(name: string, count = 1): Promise<ReadableSpan[]> {
  for (let i = 0; i < 200 && spans(name).length < count; i++) await new Promise((r) => setTimeout(r, 10));
  return spans(name);
}
const asCaller = <T>(work: () => Promise<T>) =>
  context.with(remoteContext({ traceparent: TRACEPARENT, tracestate: 'caller=1' }) ?? context.active(), work);

describe('traces (SDK registered, in-memory exporter)', () => {
  const { h, t, open, dir: freshDir } = harnessEach();
  let dir: string;

  beforeAll(() => sdk.start());
  afterAll(() => sdk.shutdown());
  beforeEach(() => {
    exporter.reset();
    dir = freshDir();
    open({ skills: t.skills }, dir);
  });
  afterEach(() => {
    setAgentName(undefined);
  });

  it("traces a create as a child of the caller's span, and keeps the create span's context with the task", async () => {
    const id = await asCaller(() => submit(h.engine, call('quick', { text: 'x' })));
    const create = one('create_task');
    expect(create.spanContext().traceId).toBe(CALLER.traceId);
    expect(create.parentSpanContext?.spanId).toBe(CALLER.spanId);
    expect(create.attributes).toMatchObject({
      'taskhandle.task.id': id,
      'taskhandle.skill': 'quick',
      'taskhandle.created': true,
    });
    const record = await h.engine.record('alice', id);
    expect(record.trace).toEqual({
      traceparent: `00-${CALLER.traceId}-${create.spanContext().spanId}-01`,
      tracestate: 'caller=1',
    });
  });

  it('runs the job as a new trace linked to the create span, with GenAI agent attributes and the end state', async () => {
    setAgentName('Report agent');
    const id = await asCaller(() => submit(h.engine, call('quick', { text: 'x' })));
    h.startRunner();
    await waitForState(h.engine, id, 'completed');
    const [run] = await ended('invoke_agent Report agent');
    const create = one('create_task');
    expect(run?.spanContext().traceId).not.toBe(CALLER.traceId);
    expect(run?.parentSpanContext).toBeUndefined();
    expect(run?.links.map((l) => l.context.spanId)).toEqual([create.spanContext().spanId]);
    expect(run?.links[0]?.context.traceId).toBe(CALLER.traceId);
    expect(run?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Report agent',
      'gen_ai.conversation.id': (await h.engine.record('alice', id)).contextId,
      'taskhandle.task.id': id,
      'taskhandle.skill': 'quick',
      'taskhandle.task.state': 'completed',
    });
  });

  it('links the run to the create span after a restart (the context is read from the task row)', async () => {
    const id = await asCaller(() => submit(h.engine, call('quick', { text: 'x' })));
    const createdBy = one('create_task').spanContext().spanId;
    await h.close();
    exporter.reset();
    open({ skills: t.skills }, dir);
    h.startRunner();
    await waitForState(h.engine, id, 'completed');
    const [run] = await ended('invoke_agent');
    expect(run?.links[0]?.context).toMatchObject({ traceId: CALLER.traceId, spanId: createdBy });
  });

  it('marks a failed job as an error, by kind only (never its message)', async () => {
    const id = await submit(h.engine, call('boom', {}));
    h.startRunner();
    await waitForState(h.engine, id, 'failed');
    const [run] = await ended('invoke_agent');
    expect(run?.status.code).toBe(SpanStatusCode.ERROR);
    expect(run?.attributes).toMatchObject({ 'taskhandle.task.state': 'failed', 'error.type': 'failed' });
    expect(JSON.stringify(run?.attributes)).not.toContain('disk on fire');
  });

  it("traces an answer to input-required under the caller's span; the run it queues links to the create span", async () => {
    const id = await submit(h.engine, call('ask', {}));
    h.startRunner();
    await waitForState(h.engine, id, 'input-required');
    await asCaller(() => answer(h.engine, id, text('Ada')));
    await waitForState(h.engine, id, 'completed');
    const reply = one('answer_task');
    expect(reply.spanContext().traceId).toBe(CALLER.traceId);
    expect(reply.attributes).toMatchObject({
      'taskhandle.task.id': id,
      'taskhandle.task.state': 'input-required',
      'taskhandle.answer.requeued': true,
      'taskhandle.answer.grant': 'owner',
    });
    const runs = await ended('invoke_agent', 2);
    const createdBy = one('create_task').spanContext().spanId;
    expect(reply.links.map((l) => l.context.spanId)).toEqual([createdBy]);
    expect(runs.map((r) => r.links[0]?.context.spanId)).toEqual([createdBy, createdBy]);
    expect(runs.map((r) => r.attributes['taskhandle.task.state'])).toEqual(['input-required', 'completed']);
  });

  it('records no payload: no input, message text or metadata on any span', async () => {
    await asCaller(() => submit(h.engine, call('quick', { text: 'secret-input-4711' })));
    const all = JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes));
    expect(all).not.toContain('secret-input-4711');
  });

  it('sends a delivery attempt as a client span of its own, linked to the create span, whose traceparent the webhook gets', async () => {
    const createdBy = `00-${CALLER.traceId}-${CALLER.spanId}-01`;
    let sent: Record<string, string> = {};
    const result = await traceDelivery(
      {
        taskId: 't-1',
        configId: 'c-1',
        attempt: 2,
        url: new URL('https://hooks.example/notify?token=abc'),
        trace: { traceparent: createdBy },
      },
      async (headers) => {
        sent = headers;
        return { ok: false, status: 503 };
      },
    );
    expect(result).toEqual({ ok: false, status: 503 });
    const delivery = one('deliver_push');
    expect(delivery.kind).toBe(SpanKind.CLIENT);
    expect(delivery.spanContext().traceId).not.toBe(CALLER.traceId);
    expect(delivery.links[0]?.context.spanId).toBe(CALLER.spanId);
    expect(sent.traceparent).toBe(`00-${delivery.spanContext().traceId}-${delivery.spanContext().spanId}-01`);
    expect(delivery.attributes).toMatchObject({
      'server.address': 'hooks.example',
      'server.port': 443,
      'http.response.status_code': 503,
      'taskhandle.push.attempt': 2,
    });
    expect(delivery.status.code).toBe(SpanStatusCode.ERROR);
    expect(JSON.stringify(delivery.attributes)).not.toContain('abc');
  });
});
