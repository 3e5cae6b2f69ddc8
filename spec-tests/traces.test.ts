import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, skillMessage, skillRequest, startTask, V1 } from './a2a.js';
import { grpcClient } from './grpc.js';
import { type Agent, launch } from './harness.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './otlp-receiver.js';
import { type Receiver, startReceiver } from './webhook-receiver.js';

/**
 * OpenTelemetry traces end to end: the real server, switched on by OTEL_EXPORTER_OTLP_ENDPOINT
 * alone, exports OTLP/HTTP JSON to a receiver on loopback. A caller's `traceparent` must be the
 * parent of the request's span on every face; the job runs in a trace of its own linked to the
 * create span; a webhook request carries its delivery span's `traceparent`.
 */

/** A caller's own span: a fresh trace per request, so each test finds its spans by trace id. */
function callerSpan() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const SERVER = 2; // OTLP's SPAN_KIND_SERVER
const CLIENT = 3; // OTLP's SPAN_KIND_CLIENT

describe('OpenTelemetry traces over OTLP/HTTP JSON', () => {
  let otlp: OtlpReceiver;
  let hook: Receiver;
  let agent: Agent;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    hook = await startReceiver();
    agent = await launch({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_SERVICE_NAME: 'taskhandle-spec',
        PUSH_ALLOW: '127.0.0.0/8',
        PUSH_POLL_MS: '50',
        GRPC_PORT: '0',
      },
    });
  });
  afterAll(async () => {
    await agent?.stop();
    await hook?.close();
    await otlp?.close();
  });

  /** The one server span of the caller's trace whose parent is the caller's span. */
  const requestSpan = async (caller: ReturnType<typeof callerSpan>): Promise<ReceivedSpan> => {
    const [span] = await otlp.waitFor(
      (s) => s.traceId === caller.traceId && s.parentSpanId === caller.spanId,
    );
    if (!span) throw new Error('no request span');
    expect(span.kind).toBe(SERVER);
    expect(span.service).toBe('taskhandle-spec');
    return span;
  };
  /** The create span of a task, which must sit under `parent` in the caller's trace. */
  const createSpan = async (taskId: string, parent: ReceivedSpan): Promise<ReceivedSpan> => {
    const [span] = await otlp.waitFor(
      (s) => s.name === 'create_task' && s.attributes['taskhandle.task.id'] === taskId,
    );
    if (!span) throw new Error('no create span');
    expect(span).toMatchObject({ traceId: parent.traceId, parentSpanId: parent.spanId });
    return span;
  };

  it("joins a JSON-RPC request to the caller's trace, links the job run to its create span, and sends the delivery span's traceparent to the webhook", async () => {
    const caller = callerSpan();
    const { body } = await agent.rpc(
      'SendMessage',
      {
        message: skillMessage('sleep', { seconds: 0 }),
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: hook.url('/traced') } },
      },
      { ...V1, headers: { traceparent: caller.traceparent, tracestate: 'caller=yes' } },
    );
    const taskId: string = body.result.task.id;
    const request = await requestSpan(caller);
    expect(request).toMatchObject({ name: 'POST /', attributes: { 'http.response.status_code': 200 } });
    const created = await createSpan(taskId, request);

    const [run] = await otlp.waitFor(
      (s) => s.name.startsWith('invoke_agent') && s.attributes['taskhandle.task.id'] === taskId,
    );
    expect(run?.traceId).not.toBe(caller.traceId);
    expect(run?.parentSpanId).toBeUndefined();
    expect(run?.links).toEqual([{ traceId: caller.traceId, spanId: created.spanId }]);
    expect(run?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'taskhandle',
      'taskhandle.skill': 'sleep',
      'taskhandle.task.state': 'completed',
    });

    const [notification] = await hook.waitFor((all) => all.some((r) => r.path === '/traced'));
    const sent = String(notification?.headers.traceparent);
    const [, traceId, spanId] = sent.split('-');
    const [delivery] = await otlp.waitFor((s) => s.name === 'deliver_push' && s.spanId === spanId);
    expect(delivery).toMatchObject({
      kind: CLIENT,
      traceId,
      links: [{ traceId: caller.traceId, spanId: created.spanId }],
      attributes: {
        'taskhandle.task.id': taskId,
        'http.response.status_code': 200,
        'server.address': '127.0.0.1',
      },
    });
    // No credentials or payloads: the webhook's URL path and the caller's input are nowhere.
    const everything = JSON.stringify(otlp.spans);
    expect(everything).not.toContain('/traced');
    expect(everything).not.toContain('"seconds"');
  });

  it("takes the caller's traceparent on REST, /v1/jobs, MCP (header and _meta) and gRPC metadata", async () => {
    const json = { 'Content-Type': 'application/json' };

    const rest = callerSpan();
    const sent = await fetch(`${agent.url}/rest/message:send`, {
      method: 'POST',
      headers: { ...json, 'A2A-Version': '1.0', traceparent: rest.traceparent },
      body: JSON.stringify({
        message: skillMessage('sleep', { seconds: 0 }),
        configuration: { returnImmediately: true },
      }),
    });
    const restTask = ((await sent.json()) as { task: { id: string } }).task.id;
    const restSpan = await requestSpan(rest);
    expect(restSpan.name).toBe('POST /rest');
    await createSpan(restTask, restSpan);

    const jobs = callerSpan();
    const made = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      headers: { ...json, traceparent: jobs.traceparent },
      body: JSON.stringify({ skill: 'sleep', input: { seconds: 0 } }),
    });
    expect(made.status).toBe(202);
    const job = ((await made.json()) as { taskId: string }).taskId;
    const jobsSpan = await requestSpan(jobs);
    expect(jobsSpan.name).toBe('POST /v1/jobs');
    await createSpan(job, jobsSpan);

    const mcp = async (headers: Record<string, string>, meta: Record<string, string>, tool = 'sleep') => {
      const res = await fetch(`${agent.url}/mcp`, {
        method: 'POST',
        headers: {
          ...json,
          ...headers,
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'tools/call',
          'Mcp-Name': tool,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: tool,
            arguments: { seconds: 0 },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {
                extensions: { 'io.modelcontextprotocol/tasks': {} },
              },
              ...meta,
            },
          },
        }),
      });
      const reply = (await res.json()) as { result?: { taskId: string } };
      return reply.result?.taskId;
    };
    // The HTTP header: the MCP span is the child of the request's span.
    const header = callerSpan();
    const viaHeader = await mcp({ traceparent: header.traceparent }, {});
    const httpSpan = await requestSpan(header);
    expect(httpSpan.name).toBe('POST /mcp');
    const [toolSpan] = await otlp.waitFor(
      (s) => s.name === 'tools/call sleep' && s.parentSpanId === httpSpan.spanId,
    );
    expect(toolSpan?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'sleep',
    });
    await createSpan(String(viaHeader), toolSpan as ReceivedSpan);
    // `_meta.traceparent`: the MCP span is the child of the caller's span, whatever the header says.
    const meta = callerSpan();
    const viaMeta = await mcp({}, { traceparent: meta.traceparent });
    const metaSpan = await requestSpan(meta);
    expect(metaSpan.name).toBe('tools/call sleep');
    expect(metaSpan.links).toHaveLength(1);
    await createSpan(String(viaMeta), metaSpan);
    // A tool that does not exist is refused, and its made-up name stays out of span names.
    const unknown = callerSpan();
    await mcp({}, { traceparent: unknown.traceparent }, 'made-up-tool-4711');
    expect((await requestSpan(unknown)).name).toBe('tools/call');
    expect(JSON.stringify(otlp.spans.map((s) => s.name))).not.toContain('made-up-tool-4711');

    const grpc = callerSpan();
    const client = await grpcClient(agent, { credentials: { traceparent: grpc.traceparent } });
    const result = (await client.sendMessage(
      skillRequest('sleep', { seconds: 0 }, { returnImmediately: true }),
    )) as { id: string };
    const grpcSpan = await requestSpan(grpc);
    expect(grpcSpan).toMatchObject({
      name: 'lf.a2a.v1.A2AService/SendMessage',
      attributes: { 'rpc.system': 'grpc', 'rpc.method': 'SendMessage', 'rpc.grpc.status_code': 0 },
    });
    await createSpan(result.id, grpcSpan);
  });

  it('links the run to its create span across a restart: created by one process, run by the next', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_SERVICE_NAME: 'taskhandle-spec',
      SHUTDOWN_TIMEOUT_MS: '100',
    };
    const first = await launch({ env: { ...env, RUNNER_CONCURRENCY: '1' } });
    // The one runner slot is taken: the traced task stays queued while this process lives.
    const blocker = await startTask(first, skillMessage('sleep', { seconds: 600 }));
    await first.waitForState(blocker.id, 'TASK_STATE_WORKING');
    const caller = callerSpan();
    const { body } = await first.rpc(
      'SendMessage',
      { message: skillMessage('sleep', { seconds: 0 }), configuration: { returnImmediately: true } },
      { ...V1, headers: { traceparent: caller.traceparent } },
    );
    const taskId: string = body.result.task.id;
    const created = await createSpan(taskId, await requestSpan(caller));
    expect((await getTask(first, taskId)).status.state).toBe('TASK_STATE_SUBMITTED');
    await first.stop();

    const second = await launch({ dbPath: first.dbPath, env });
    try {
      await second.waitForState(taskId, 'TASK_STATE_COMPLETED');
      const [run] = await otlp.waitFor(
        (s) => s.name.startsWith('invoke_agent') && s.attributes['taskhandle.task.id'] === taskId,
      );
      expect(run?.traceId).not.toBe(caller.traceId);
      expect(run?.links).toEqual([{ traceId: caller.traceId, spanId: created.spanId }]);
    } finally {
      await second.stop();
    }
  });

  it('starts a new trace for a malformed traceparent, and answers the request as usual', async () => {
    const { status, body } = await agent.rpc(
      'SendMessage',
      { message: skillMessage('sleep', { seconds: 0 }), configuration: { returnImmediately: true } },
      { ...V1, headers: { traceparent: '00-ZZZ-not-a-trace-01', tracestate: '=,,==;;' } },
    );
    expect(status).toBe(200);
    const taskId: string = body.result.task.id;
    const [created] = await otlp.waitFor(
      (s) => s.name === 'create_task' && s.attributes['taskhandle.task.id'] === taskId,
    );
    const request = otlp.spans.find((s) => s.spanId === created?.parentSpanId);
    expect(request).toMatchObject({ name: 'POST /', parentSpanId: undefined });
  });

  it('sends the spans it still holds when it stops (SIGTERM), then exits 0', async () => {
    // Batches that would wait a minute: only the flush at the stop can deliver this one in time.
    const slow = await launch({
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '60000',
      },
    });
    expect(slow.logs.some((l) => l.msg === 'tracing: OpenTelemetry SDK started (docs/tracing.md)')).toBe(
      true,
    );
    const caller = callerSpan();
    await slow.rpc(
      'GetTask',
      { id: 'no-such-task' },
      { ...V1, headers: { traceparent: caller.traceparent } },
    );
    expect(await slow.stop()).toBe(0);
    // Sent before the exit: the receiver had answered the export by then.
    const span = otlp.spans.find((s) => s.traceId === caller.traceId);
    expect(span).toMatchObject({ name: 'POST /', parentSpanId: caller.spanId, service: 'taskhandle' });
  });
});
