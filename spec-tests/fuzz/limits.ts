import fc from 'fast-check';
import { type FuzzResponse, tooManyClaims, violation } from './checks.js';
import { type GrpcHeld, grpcHold, grpcTaskRequest, type HeldStream, hold } from './client.js';
import type { FuzzRequest } from './requests.js';

/**
 * A principal driven to and past the bounds of docs/SECURITY.md's Limits table, on a server
 * launched with small ones: its open task streams (MAX_STREAMS), a task's webhooks
 * (MAX_PUSH_CONFIGS), a worker's waiting claims (MAX_WAITING_CLAIMS). Each run is a generated
 * sequence of operations over the faces, checked against a model: below the bound the operation is
 * served, at it refused in its face's shape with words naming the setting, and what is closed or
 * deleted gives its place back.
 */
export const BOUNDS = { streams: 2, pushConfigs: 2, waitingClaims: 2 } as const;

/** How long a place given back (a stream closed, a claim dropped) may take to be free again. */
const GIVEN_BACK_MS = 5000;
/**
 * A claim still unanswered after this long is taken for waiting (a refusal comes at once); one
 * answered later after all is put right before the bound is judged (see `reconcile`).
 */
const WAITING_MS = 60;
/** How long an MCP stream is given to end after its priming event (past the bound it does). */
const MCP_SETTLE_MS = 150;

/** The server the bounds are driven on, and the credentials' headers of whom they are driven as. */
export interface LimitsServer {
  url: string;
  /** Its gRPC address (host:port). */
  grpc: string;
  /** The principal whose streams and webhooks are bounded (no other test uses it). */
  owner: Record<string, string>;
  /** An operator (OPERATORS): its console streams are its own. */
  operator: Record<string, string>;
  /** A worker (WORKERS) whose claims are bounded, and another one. */
  worker: Record<string, string>;
  otherWorker: Record<string, string>;
  /** The owner's task that has ended (completed): a stream of it replays and ends. */
  endedTask: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The answer as the suite's checks read it. */
const asResponse = (h: HeldStream): FuzzResponse => ({
  status: h.status,
  contentType: h.contentType,
  text: h.text,
  headers: h.headers,
});

/** A request with its credentials' headers in it (`as` only tells the checks a worker from a caller). */
const request = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
  as: FuzzRequest['as'] = 'alice',
): FuzzRequest => ({
  method,
  path,
  as,
  headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
  body: body === undefined ? undefined : JSON.stringify(body),
});

const rpc = (method: string, params: unknown) => ({ jsonrpc: '2.0', id: 1, method, params });
const V1 = { 'A2A-Version': '1.0' };

/** Sends `r` on a connection of its own and reads its whole answer; an unbroken rule is a failure. */
async function call(server: LimitsServer, r: FuzzRequest): Promise<{ res: FuzzResponse; why?: string }> {
  const res = asResponse(await hold(server.url, r).answer);
  const why = violation(r, res);
  return {
    res,
    why: why && `${why}: ${r.method} ${r.path} answered ${res.status} ${res.text.slice(0, 300)}`,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: answers are inspected freely in tests
const parsed = (text: string): any => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The JSON of an event stream's first `data:` line. */
// biome-ignore lint/suspicious/noExplicitAny: answers are inspected freely in tests
const firstData = (text: string): any => {
  const line = /^data: ?(.+)$/m.exec(text)?.[1];
  return line === undefined ? undefined : parsed(line);
};

// Streams --------------------------------------------------------------------------------------

/** Every face that streams a task, by how it is asked. */
export const STREAM_FACES = [
  'jsonrpc-subscribe',
  'jsonrpc-send',
  'jsonrpc-v0.3-resubscribe',
  'jsonrpc-v0.3-send',
  'rest-subscribe',
  'rest-send',
  'rest-v0.3-subscribe',
  'jobs-events',
  'mcp-call',
  'mcp-result',
  // 2026-07-28's subscriptions/listen of the task: one stream, whatever its tasks.
  'mcp-listen',
  'grpc-subscribe',
  // The inbox's change stream: not a task's, but one of its caller's streams all the same.
  'inbox-events',
] as const;
export type StreamFace = (typeof STREAM_FACES)[number];
/** The A2A faces whose stream is of a task the request makes (MCP's tools/call: see its finding). */
const SENDS: readonly StreamFace[] = ['jsonrpc-send', 'jsonrpc-v0.3-send', 'rest-send'];

export type StreamOp =
  /** A stream of the run's running task (a send: of a new task, which runs until the run ends). */
  | { op: 'open'; face: StreamFace }
  /** The client drops one of its open streams. */
  | { op: 'close'; which: number }
  /** A stream of a task that has ended: it replays and ends, and keeps no slot. */
  | { op: 'ended' }
  /** A stream of a task that does not exist: refused before it opens, it keeps no slot. */
  | { op: 'missing'; face: 'jobs-events' | 'jsonrpc-subscribe' | 'rest-subscribe' }
  /** The operator opens the console's change stream: a slot of the operator's, not the owner's. */
  | { op: 'operator' };

const openOp = fc.constantFrom(...STREAM_FACES).map((face): StreamOp => ({ op: 'open', face }));

/** A run: streams opened past the bound first, then anything. */
export const streamOps: fc.Arbitrary<StreamOp[]> = fc
  .tuple(
    fc.array(openOp, { minLength: BOUNDS.streams + 1, maxLength: BOUNDS.streams + 1 }),
    fc.array(
      fc.oneof(
        { weight: 5, arbitrary: openOp },
        { weight: 3, arbitrary: fc.nat(9).map((which): StreamOp => ({ op: 'close', which })) },
        { weight: 1, arbitrary: fc.constant<StreamOp>({ op: 'ended' }) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom('jobs-events', 'jsonrpc-subscribe', 'rest-subscribe')
            .map((face): StreamOp => ({ op: 'missing', face })),
        },
        { weight: 1, arbitrary: fc.constant<StreamOp>({ op: 'operator' }) },
      ),
      { maxLength: 8 },
    ),
  )
  .map(([first, rest]) => [...first, ...rest]);

/** The words of every face's refusal of one stream too many. */
const TOO_MANY_STREAMS = new RegExp(
  `You have ${BOUNDS.streams} streams open, the most allowed \\(MAX_STREAMS\\)`,
);

/** A stream asked on a face: served (and held), or refused; `known` names a reported server finding. */
interface Opened {
  admitted: boolean;
  /** Why the answer is neither the stream nor its face's refusal. */
  why?: string;
  known?: string;
  /** The task a send made, read from the answer (MCP: from its event id). */
  taskId?: string;
  /**
   * A stream taken for served that the server has ended since: an MCP stream past the bound ends
   * after its priming event, later than the fuzz waited on a loaded machine (see its finding).
   */
  endedSince?: () => boolean;
  close(): void;
}

/** The task of an MCP stream's event id (base64url JSON naming it, a dot, a sequence number). */
const mcpTaskOf = (text: string): string | undefined => {
  const id = /^id: ?([A-Za-z0-9_-]+)\./m.exec(text)?.[1];
  return id === undefined ? undefined : parsed(Buffer.from(id, 'base64url').toString('utf8'))?.taskId;
};

/** The request of a stream on `face` of task `taskId` (sends make a task of context `contextId`). */
function streamRequest(
  face: Exclude<StreamFace, 'grpc-subscribe'>,
  headers: Record<string, string>,
  taskId: string,
  contextId: string,
): FuzzRequest {
  const sleeper = { skill: 'sleep', input: { seconds: 600 } };
  const message = {
    messageId: crypto.randomUUID(),
    role: 'ROLE_USER',
    contextId,
    parts: [{ data: sleeper }],
  };
  const sse = { ...headers, Accept: 'text/event-stream' };
  switch (face) {
    case 'jsonrpc-subscribe':
      return request('POST', '/', { ...sse, ...V1 }, rpc('SubscribeToTask', { id: taskId }));
    case 'jsonrpc-send':
      return request('POST', '/', { ...sse, ...V1 }, rpc('SendStreamingMessage', { message }));
    case 'jsonrpc-v0.3-resubscribe':
      return request('POST', '/', sse, rpc('tasks/resubscribe', { id: taskId }));
    case 'jsonrpc-v0.3-send':
      return request(
        'POST',
        '/',
        sse,
        rpc('message/stream', {
          message: {
            kind: 'message',
            messageId: crypto.randomUUID(),
            role: 'user',
            contextId,
            parts: [{ kind: 'data', data: sleeper }],
          },
        }),
      );
    case 'rest-subscribe':
      return request('GET', `/rest/tasks/${encodeURIComponent(taskId)}:subscribe`, { ...sse, ...V1 });
    case 'rest-send':
      return request('POST', '/rest/message:stream', { ...sse, ...V1 }, { message });
    case 'rest-v0.3-subscribe':
      return request('GET', `/rest/v1/tasks/${encodeURIComponent(taskId)}:subscribe`, sse);
    case 'jobs-events':
      return request('GET', `/v1/jobs/${encodeURIComponent(taskId)}/events`, sse);
    case 'inbox-events':
      return request('GET', '/inbox/api/events', sse);
    case 'mcp-call':
      return request(
        'POST',
        '/mcp',
        { ...headers, Accept: 'application/json, text/event-stream' },
        rpc('tools/call', { name: 'sleep', arguments: { seconds: 600 } }),
      );
    case 'mcp-result':
      return request(
        'POST',
        '/mcp',
        { ...headers, Accept: 'application/json, text/event-stream' },
        rpc('tasks/result', { taskId }),
      );
    case 'mcp-listen':
      return request(
        'POST',
        '/mcp',
        {
          ...headers,
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': 'subscriptions/listen',
        },
        rpc('subscriptions/listen', {
          notifications: { taskIds: [taskId] },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {
              extensions: { 'io.modelcontextprotocol/tasks': {} },
            },
          },
        }),
      );
  }
}

/** Opens a stream on `face` and reads what it is: held, refused in its face's shape, or neither. */
async function openStream(
  server: LimitsServer,
  face: StreamFace,
  taskId: string,
  contextId: string,
  headers = server.owner,
): Promise<Opened> {
  if (face === 'grpc-subscribe') {
    const held: GrpcHeld = await grpcHold(
      server.grpc,
      '/lf.a2a.v1.A2AService/SubscribeToTask',
      grpcTaskRequest(taskId),
      headers,
    );
    if (held.admitted) return { admitted: true, close: held.close };
    held.close();
    const s = held.status;
    const ok = s?.code === 8 && TOO_MANY_STREAMS.test(s.details);
    return {
      admitted: false,
      close: () => {},
      why: ok
        ? undefined
        : `a gRPC stream refused with ${s?.code} ${s?.details}, not RESOURCE_EXHAUSTED naming MAX_STREAMS`,
    };
  }
  const r = streamRequest(face, headers, taskId, contextId);
  const mcp = face.startsWith('mcp');
  // An MCP stream says nothing after its priming event until the task changes: give it time to end.
  const held = await hold(server.url, r, mcp ? MCP_SETTLE_MS : 20).answer;
  const res = asResponse(held);
  const base = violation(r, res);
  const told = `${r.method} ${r.path} answered ${held.status} ${held.contentType} ${held.text.slice(0, 300)}`;
  const refused = (why: string | undefined): Opened => {
    held.close();
    return { admitted: false, close: () => {}, why: why && `${why}: ${told}` };
  };
  if (base) return refused(base);
  const sse = held.contentType.startsWith('text/event-stream');
  const data = sse ? firstData(held.text) : parsed(held.text);
  if (sse && held.status === 200 && !held.ended && data?.error === undefined) {
    // Served: the first event is the task (JSON-RPC: as a result), not an error.
    const taskOf = mcp
      ? mcpTaskOf(held.text)
      : (data?.result?.task?.id ?? data?.result?.id ?? data?.task?.id ?? data?.result?.taskId);
    const endedSince = () => held.ended && firstData(held.text) === undefined;
    return { admitted: true, close: held.close, taskId: taskOf, ...(mcp ? { endedSince } : {}) };
  }
  // Refused: each face's shape (docs/SECURITY.md, Limits), with words naming MAX_STREAMS.
  switch (face) {
    case 'jsonrpc-subscribe':
    case 'jsonrpc-send':
    case 'jsonrpc-v0.3-resubscribe':
    case 'jsonrpc-v0.3-send':
      // A JSON-RPC error -32054 (v0.3: as the stream's one event).
      return refused(
        data?.error?.code === -32054 && TOO_MANY_STREAMS.test(data.error.message)
          ? undefined
          : 'not the JSON-RPC refusal -32054 naming MAX_STREAMS',
      );
    case 'rest-subscribe':
    case 'rest-send':
      return refused(
        held.status === 429 && data?.error?.code === 429 && TOO_MANY_STREAMS.test(data.error.message)
          ? undefined
          : 'not the REST refusal 429 naming MAX_STREAMS',
      );
    case 'rest-v0.3-subscribe':
      return refused(
        held.status === 429 && Number.isInteger(data?.code) && TOO_MANY_STREAMS.test(data.message)
          ? undefined
          : 'not the REST v0.3 refusal 429 naming MAX_STREAMS',
      );
    case 'jobs-events':
    case 'inbox-events':
      return refused(
        held.status === 429 &&
          held.contentType.startsWith('application/problem+json') &&
          /You have \d+ streams open, the most allowed \(MAX_STREAMS\)/.test(data?.detail)
          ? undefined
          : 'not the 429 problem naming MAX_STREAMS',
      );
    case 'mcp-call':
    case 'mcp-result':
    case 'mcp-listen': {
      if (data?.error?.code === -32600 && TOO_MANY_STREAMS.test(data.error.message))
        return refused(undefined);
      return refused('not the MCP refusal -32600 naming MAX_STREAMS');
    }
  }
}

/** What a run found: the first broken rule, and the reported findings it met. */
export interface RunReport {
  why?: string;
  known: string[];
  /** Answers by kind, for the run's summary. */
  seen: string[];
}

/**
 * One run of stream operations for the owner, on a task of its that runs for the run's length:
 * below MAX_STREAMS each stream is served (once the slots of closed ones are back), at it refused;
 * refused sends make no task; the inbox's change stream is one of the owner's streams; the
 * operator's console change streams are bounded on their own and take none of the owner's slots.
 */
export async function streamRun(server: LimitsServer, ops: StreamOp[]): Promise<RunReport> {
  const report: RunReport = { known: [], seen: [] };
  const contextId = `limits-${crypto.randomUUID()}`;
  const open: Opened[] = [];
  const operator: HeldStream[] = [];
  const made = new Set<string>();
  /** Sends refused past the bound (each may have made its task: reported). */
  let refusedSends = 0;
  const created = await call(
    server,
    request('POST', '/v1/jobs', server.owner, { skill: 'sleep', input: { seconds: 600 } }),
  );
  const taskId = String(parsed(created.res.text)?.taskId);
  if (created.why || created.res.status !== 202) {
    report.why = created.why ?? `the run's task was not made: ${created.res.status} ${created.res.text}`;
    return report;
  }
  made.add(taskId);
  try {
    for (const op of ops) {
      const why = await streamStep(op);
      if (why) {
        report.why = `${why} (after ${JSON.stringify(ops.slice(0, ops.indexOf(op)))})`;
        return report;
      }
    }
    // A refused send made no task: every task of the run's context is one an admitted send made.
    const listed = await call(
      server,
      request('POST', '/', { ...server.owner, ...V1 }, rpc('ListTasks', { contextId, pageSize: 100 })),
    );
    const tasks: { id: string }[] = parsed(listed.res.text)?.result?.tasks ?? [];
    const stray = tasks.map((t) => t.id).filter((id) => !made.has(id));
    for (const id of stray) made.add(id);
    if (listed.why) report.why = listed.why;
    else if (stray.length > refusedSends)
      report.why = `${stray.length} tasks made by ${refusedSends} refused sends: ${stray.join(', ')}`;
    // A streaming send past the bound is refused before it makes anything (its stream's slot first).
    else if (stray.length > 0)
      report.why = `${stray.length} tasks made by streaming sends refused past MAX_STREAMS`;
    return report;
  } finally {
    for (const s of open) s.close();
    for (const s of operator) s.close();
    for (const id of made)
      await hold(server.url, request('POST', `/v1/jobs/${encodeURIComponent(id)}:cancel`, server.owner))
        .answer;
  }

  async function streamStep(op: StreamOp): Promise<string | undefined> {
    switch (op.op) {
      case 'close': {
        const [s] = open.splice(op.which % Math.max(1, open.length), 1);
        s?.close();
        return undefined;
      }
      case 'operator': {
        // The operator's own bound: past it a 429 problem, below it served (once closed ones are back).
        const r = request('GET', '/console/api/events', server.operator);
        const deadline = Date.now() + GIVEN_BACK_MS;
        for (;;) {
          const held = await hold(server.url, r).answer;
          const told = `the operator's console stream answered ${held.status} ${held.text.slice(0, 200)}`;
          const refusal =
            held.status === 429 &&
            held.contentType.startsWith('application/problem+json') &&
            TOO_MANY_STREAMS.test(parsed(held.text)?.detail);
          report.seen.push(`operator ${held.status}`);
          if (operator.length >= BOUNDS.streams) {
            held.close();
            return refusal ? undefined : `past MAX_STREAMS, ${told}`;
          }
          if (held.status === 200 && held.contentType.startsWith('text/event-stream')) {
            operator.push(held);
            return undefined;
          }
          held.close();
          if (!refusal) return told;
          if (Date.now() > deadline) return `below MAX_STREAMS after ${GIVEN_BACK_MS} ms, ${told}`;
          await sleep(25);
        }
      }
      case 'ended':
      case 'missing': {
        const face = op.op === 'ended' ? 'jobs-events' : op.face;
        const target = op.op === 'ended' ? server.endedTask : `no-such-task-${crypto.randomUUID()}`;
        const r = streamRequest(face, server.owner, target, contextId);
        return eventuallyBelow(async () => {
          const held = await hold(server.url, r, 50).answer;
          const res = asResponse(held);
          const base = violation(r, res);
          const told = `${r.method} ${r.path} answered ${held.status} ${held.text.slice(0, 300)}`;
          held.close();
          if (base) return { why: `${base}: ${told}` };
          const data = held.contentType.startsWith('text/event-stream')
            ? firstData(held.text)
            : parsed(held.text);
          const message = String(data?.error?.message ?? data?.message ?? data?.detail ?? '');
          const overBound = TOO_MANY_STREAMS.test(message);
          report.seen.push(`${op.op} ${face} ${overBound ? 'refused' : held.status}`);
          if (open.length >= BOUNDS.streams && !(!overBound && reconcile()))
            return overBound
              ? {}
              : { why: `past MAX_STREAMS, a stream of an ${op.op} task was not refused: ${told}` };
          if (overBound) return { retry: true };
          if (op.op === 'ended') {
            // Replayed and ended: the snapshot, then the end (the task is done).
            if (held.status !== 200) return { why: `a stream of an ended task answered: ${told}` };
            for (let i = 0; i < 20 && !held.ended; i++) await sleep(50);
            return held.ended ? {} : { why: `a stream of an ended task did not end: ${told}` };
          }
          return held.status === 404 || data?.error?.code === -32001
            ? {}
            : { why: `a stream of a task that does not exist answered: ${told}` };
        });
      }
      case 'open': {
        const face = op.face;
        if (open.length >= BOUNDS.streams) {
          const o = await openStream(server, face, taskId, contextId);
          if (o.taskId) made.add(o.taskId);
          report.seen.push(`${face} ${o.admitted ? 'served' : 'refused'}`);
          if (o.known) report.known.push(o.known);
          if (o.admitted && reconcile()) {
            open.push(o);
            return undefined;
          }
          if (o.admitted) {
            o.close();
            return `past MAX_STREAMS (${open.length} open), a ${face} stream was served`;
          }
          if (SENDS.includes(face)) refusedSends++;
          return o.why;
        }
        return eventuallyBelow(async () => {
          const o = await openStream(server, face, taskId, contextId);
          if (o.taskId) made.add(o.taskId);
          report.seen.push(`${face} ${o.admitted ? 'served' : 'refused'}`);
          if (o.known) report.known.push(o.known);
          if (o.why) return { why: o.why };
          if (!o.admitted && SENDS.includes(face)) refusedSends++;
          if (!o.admitted) return { retry: true };
          open.push(o);
          return {};
        });
      }
    }
  }

  /**
   * Drops the streams taken for served that the server has ended since (an MCP stream past the
   * bound, reported); true when there were any.
   */
  function reconcile(): boolean {
    const gone = open.filter((o) => o.endedSince?.());
    for (const o of gone) open.splice(open.indexOf(o), 1);
    return gone.length > 0;
  }

  /**
   * Below the bound, a refusal may only be a slot not yet given back (a stream closed a moment
   * ago): retried, it must be served within {@link GIVEN_BACK_MS}.
   */
  async function eventuallyBelow(
    attempt: () => Promise<{ why?: string; retry?: boolean }>,
  ): Promise<string | undefined> {
    const deadline = Date.now() + GIVEN_BACK_MS;
    for (;;) {
      const { why, retry } = await attempt();
      if (why || !retry) return why;
      if (Date.now() > deadline)
        return `with ${open.length} of ${BOUNDS.streams} streams open, one more was still refused after ${GIVEN_BACK_MS} ms: a closed stream did not give its slot back`;
      await sleep(25);
    }
  }
}

// Webhooks ---------------------------------------------------------------------------------------

/** The faces that set, delete and list a task's webhooks. */
const PUSH_FACES = ['jsonrpc', 'jsonrpc-v0.3', 'rest', 'rest-v0.3'] as const;
type PushFace = (typeof PUSH_FACES)[number];

export type PushOp =
  /** A webhook by id (none: `default`): new, or replacing one of that id. */
  | { op: 'set'; face: PushFace; id?: string }
  /** New webhooks at once, on JSON-RPC: no more than the bound may be kept. */
  | { op: 'burst'; ids: string[] }
  | { op: 'delete'; face: PushFace; id?: string }
  | { op: 'list'; face: Exclude<PushFace, 'rest-v0.3'> };

const pushId = fc.option(fc.constantFrom('a', 'b', 'c', 'd'), { freq: 4, nil: undefined });
const pushFace = fc.constantFrom(...PUSH_FACES);
const setOp = fc.record({ op: fc.constant('set' as const), face: pushFace, id: pushId });

/** New webhooks set at once (room or not). */
const burstOp = fc
  .uniqueArray(fc.constantFrom('e', 'f', 'g', 'h', 'i'), { minLength: 2, maxLength: BOUNDS.pushConfigs + 3 })
  .map((ids): PushOp => ({ op: 'burst', ids }));

/** A run: webhooks set past the bound first (one by one, or all at once), then anything. */
export const pushOps: fc.Arbitrary<PushOp[]> = fc
  .tuple(
    fc.oneof(
      fc.array(setOp, { minLength: BOUNDS.pushConfigs + 1, maxLength: BOUNDS.pushConfigs + 2 }),
      burstOp.filter((b) => b.op === 'burst' && b.ids.length > BOUNDS.pushConfigs).map((b) => [b]),
    ),
    fc.array(
      fc.oneof(
        { weight: 4, arbitrary: setOp },
        { weight: 1, arbitrary: burstOp },
        {
          weight: 3,
          arbitrary: fc.record({ op: fc.constant('delete' as const), face: pushFace, id: pushId }),
        },
        {
          weight: 1,
          arbitrary: fc.record({
            op: fc.constant('list' as const),
            face: fc.constantFrom('jsonrpc' as const, 'jsonrpc-v0.3' as const, 'rest' as const),
          }),
        },
      ),
      { maxLength: 8 },
    ),
  )
  .map(([first, rest]) => [...first, ...rest]);

/**
 * One run of webhook operations on a task of the owner's that has ended (so that no webhook is
 * ever called): a new one is kept below MAX_PUSH_CONFIGS and refused at it, in each face's shape
 * and words; replacing one by its id, and one more after a delete, are kept; the list is the model.
 */
export async function pushRun(server: LimitsServer, ops: PushOp[], hook: string): Promise<RunReport> {
  const report: RunReport = { known: [], seen: [] };
  const created = await call(
    server,
    request(
      'POST',
      '/v1/jobs',
      { ...server.owner, Prefer: 'wait=5' },
      { skill: 'export', input: { rows: 1 } },
    ),
  );
  const taskId = String(parsed(created.res.text)?.taskId);
  if (created.why || parsed(created.res.text)?.state !== 'completed') {
    report.why = created.why ?? `the run's task did not complete: ${created.res.status} ${created.res.text}`;
    return report;
  }
  const kept = new Set<string>();
  const t = encodeURIComponent(taskId);
  const limitWords = (n: number) =>
    `Task ${taskId} has ${n} push notification configs, the most it may have (MAX_PUSH_CONFIGS): delete one, or replace one by its id`;

  const setRequest = (face: PushFace, id: string | undefined): FuzzRequest => {
    const config = { ...(id === undefined ? {} : { id }), url: hook };
    switch (face) {
      case 'jsonrpc':
        return request(
          'POST',
          '/',
          { ...server.owner, ...V1 },
          rpc('CreateTaskPushNotificationConfig', { taskId, ...config }),
        );
      case 'jsonrpc-v0.3':
        return request(
          'POST',
          '/',
          server.owner,
          rpc('tasks/pushNotificationConfig/set', { taskId, pushNotificationConfig: config }),
        );
      case 'rest':
        return request(
          'POST',
          `/rest/tasks/${t}/pushNotificationConfigs`,
          { ...server.owner, ...V1 },
          config,
        );
      case 'rest-v0.3':
        return request('POST', `/rest/v1/tasks/${t}/pushNotificationConfigs`, server.owner, {
          name: `tasks/${taskId}`,
          pushNotificationConfig: config,
        });
    }
  };
  /** Why a set's answer is not what the model says: kept below the bound or replacing, else refused. */
  const checkSet = (
    face: PushFace,
    id: string,
    res: FuzzResponse,
    expectKept: boolean,
  ): string | undefined => {
    const body = parsed(res.text);
    const error = face.startsWith('jsonrpc') ? body?.error : undefined;
    const ok = face.startsWith('jsonrpc')
      ? error === undefined && body?.result !== undefined
      : res.status === 201;
    if (expectKept)
      return ok ? undefined : `a webhook ${id} below MAX_PUSH_CONFIGS (or replacing) was refused`;
    if (ok) return `a webhook ${id} past MAX_PUSH_CONFIGS (${kept.size} kept) was kept`;
    const words = limitWords(kept.size);
    switch (face) {
      case 'jsonrpc':
      case 'jsonrpc-v0.3':
        return error?.code === -32004 && error.message === words
          ? undefined
          : 'not -32004 naming MAX_PUSH_CONFIGS';
      case 'rest':
        return res.status === 400 &&
          body?.error?.status === 'FAILED_PRECONDITION' &&
          body.error.message === words
          ? undefined
          : 'not 400 FAILED_PRECONDITION naming MAX_PUSH_CONFIGS';
      case 'rest-v0.3':
        return res.status === 400 && body?.message === words ? undefined : 'not 400 naming MAX_PUSH_CONFIGS';
    }
  };
  const listIds = async (face: Exclude<PushFace, 'rest-v0.3'>): Promise<{ ids?: string[]; why?: string }> => {
    const r =
      face === 'rest'
        ? request('GET', `/rest/tasks/${t}/pushNotificationConfigs`, { ...server.owner, ...V1 })
        : face === 'jsonrpc'
          ? request(
              'POST',
              '/',
              { ...server.owner, ...V1 },
              rpc('ListTaskPushNotificationConfigs', { taskId }),
            )
          : request('POST', '/', server.owner, rpc('tasks/pushNotificationConfig/list', { id: taskId }));
    const { res, why } = await call(server, r);
    if (why) return { why };
    const body = parsed(res.text);
    const configs: { id?: string; pushNotificationConfig?: { id?: string } }[] =
      face === 'rest' ? body?.configs : face === 'jsonrpc' ? body?.result?.configs : body?.result;
    if (!Array.isArray(configs))
      return { why: `a ${face} list of webhooks answered ${res.status} ${res.text.slice(0, 200)}` };
    return { ids: configs.map((c) => String(c.id ?? c.pushNotificationConfig?.id)).sort() };
  };

  for (const op of ops) {
    const why = await pushStep(op);
    if (why) {
      report.why = `${why} (task ${taskId}, after ${JSON.stringify(ops.slice(0, ops.indexOf(op)))})`;
      return report;
    }
  }
  const { ids, why } = await listIds('jsonrpc');
  if (why) report.why = why;
  else if (JSON.stringify(ids) !== JSON.stringify([...kept].sort()))
    report.why = `task ${taskId} lists webhooks ${JSON.stringify(ids)}, not ${JSON.stringify([...kept].sort())}`;
  return report;

  async function pushStep(op: PushOp): Promise<string | undefined> {
    switch (op.op) {
      case 'set': {
        const id = op.id ?? 'default';
        const expectKept = kept.has(id) || kept.size < BOUNDS.pushConfigs;
        const r = setRequest(op.face, op.id);
        const { res, why } = await call(server, r);
        report.seen.push(`set ${op.face} ${expectKept ? 'kept' : 'refused'} ${res.status}`);
        if (why) return why;
        const wrong = checkSet(op.face, id, res, expectKept);
        if (wrong) return `${op.face}: ${wrong}: ${res.status} ${res.text.slice(0, 300)}`;
        if (expectKept) kept.add(id);
        return undefined;
      }
      case 'burst': {
        const fresh = op.ids.filter((id) => !kept.has(id));
        const answers = await Promise.all(fresh.map((id) => call(server, setRequest('jsonrpc', id))));
        const bad = answers.find((a) => a.why);
        if (bad) return bad.why;
        const keptNow = answers.filter((a) => parsed(a.res.text)?.result !== undefined).length;
        const room = Math.max(0, BOUNDS.pushConfigs - kept.size);
        const { ids, why } = await listIds('jsonrpc');
        if (why) return why;
        report.seen.push(`burst ${fresh.length} kept ${keptNow}`);
        const gained = (ids ?? []).filter((id) => !kept.has(id)).length;
        if (keptNow !== gained)
          return `${fresh.length} webhooks set at once: ${keptNow} answered kept, ${gained} listed (${JSON.stringify(ids)})`;
        // The store checks the bound in each put's own transaction: webhooks set at once cannot pass it.
        if ((ids?.length ?? 0) > BOUNDS.pushConfigs)
          return `${fresh.length} webhooks set at once: ${ids?.length} kept, more than MAX_PUSH_CONFIGS`;
        if (keptNow !== Math.min(room, fresh.length))
          return `${fresh.length} new webhooks set at once with room for ${room}: ${keptNow} kept`;
        for (const a of answers) {
          const error = parsed(a.res.text)?.error;
          if (error && !(error.code === -32004 && /MAX_PUSH_CONFIGS/.test(error.message)))
            return `a webhook of a burst refused with ${JSON.stringify(error)}`;
        }
        kept.clear();
        for (const id of ids ?? []) kept.add(id);
        return undefined;
      }
      case 'delete': {
        const id = op.id ?? 'default';
        const r =
          op.face === 'jsonrpc'
            ? request(
                'POST',
                '/',
                { ...server.owner, ...V1 },
                rpc('DeleteTaskPushNotificationConfig', { taskId, id }),
              )
            : op.face === 'jsonrpc-v0.3'
              ? request(
                  'POST',
                  '/',
                  server.owner,
                  rpc('tasks/pushNotificationConfig/delete', { id: taskId, pushNotificationConfigId: id }),
                )
              : op.face === 'rest'
                ? request('DELETE', `/rest/tasks/${t}/pushNotificationConfigs/${id}`, {
                    ...server.owner,
                    ...V1,
                  })
                : request('DELETE', `/rest/v1/tasks/${t}/pushNotificationConfigs/${id}`, server.owner);
        const { res, why } = await call(server, r);
        report.seen.push(`delete ${op.face} ${res.status}`);
        if (why) return why;
        const failed = op.face.startsWith('jsonrpc')
          ? parsed(res.text)?.error !== undefined
          : res.status !== 204;
        if (failed)
          return `deleting webhook ${id} (${op.face}) answered ${res.status} ${res.text.slice(0, 300)}`;
        kept.delete(id);
        return undefined;
      }
      case 'list': {
        const { ids, why } = await listIds(op.face);
        if (why) return why;
        return JSON.stringify(ids) === JSON.stringify([...kept].sort())
          ? undefined
          : `${op.face} lists webhooks ${JSON.stringify(ids)}, not ${JSON.stringify([...kept].sort())}`;
      }
    }
  }
}

// Waiting claims ----------------------------------------------------------------------------------

export type ClaimOp =
  /** A long poll for a skill no task of which is ever queued: it waits (or is refused). */
  | { op: 'wait' }
  /** The worker drops one of its waiting claims. */
  | { op: 'drop'; which: number }
  /** A claim that waits 150 ms and ends by itself, answered with no jobs. */
  | { op: 'short' }
  /** A claim that does not wait (waitMs 0): never refused, whatever waits. */
  | { op: 'now' }
  /** Another worker's claim: its own bound, not this one's. */
  | { op: 'other' };

/** A run: claims waiting past the bound first, then anything. */
export const claimOps: fc.Arbitrary<ClaimOp[]> = fc
  .tuple(
    fc.constant(Array.from({ length: BOUNDS.waitingClaims + 1 }, (): ClaimOp => ({ op: 'wait' }))),
    fc.array(
      fc.oneof(
        { weight: 3, arbitrary: fc.constant<ClaimOp>({ op: 'wait' }) },
        { weight: 3, arbitrary: fc.nat(9).map((which): ClaimOp => ({ op: 'drop', which })) },
        { weight: 1, arbitrary: fc.constant<ClaimOp>({ op: 'short' }) },
        { weight: 1, arbitrary: fc.constant<ClaimOp>({ op: 'now' }) },
        { weight: 1, arbitrary: fc.constant<ClaimOp>({ op: 'other' }) },
      ),
      { maxLength: 6 },
    ),
  )
  .map(([first, rest]) => [...first, ...rest]);

/**
 * One run of claim operations for the worker, on a skill none of whose tasks is ever queued:
 * below MAX_WAITING_CLAIMS each long poll waits (once dropped ones are given back), at it a waiting
 * claim is refused 429 `too-many-claims` with Retry-After; a claim that does not wait, and another
 * worker's, are never refused; one that ends by its waitMs gives its place back.
 */
export async function claimRun(server: LimitsServer, ops: ClaimOp[], skill: string): Promise<RunReport> {
  const report: RunReport = { known: [], seen: [] };
  /** The claims taken for waiting, and the answer each has had since, if any. */
  const waiting: { close: () => void; since?: FuzzResponse }[] = [];
  const claim = (waitMs: number, headers = server.worker) =>
    request('POST', '/v1/workers/claims', headers, { skills: [skill], max: 1, waitMs }, 'robot');
  /** Sends a claim: its answer within `ms`, or undefined (it waits), and how to drop it. */
  const send = async (r: FuzzRequest, ms: number) => {
    const h = hold(server.url, r);
    const answer = await Promise.race([h.answer, sleep(ms).then(() => undefined)]);
    return { h, answer: answer && asResponse(answer) };
  };
  /** Why a claim's whole answer breaks the suite's rules or is not `jobs: []`. */
  const noJobs = (r: FuzzRequest, res: FuzzResponse) => {
    const why = violation(r, res);
    if (why) return why;
    return res.status === 200 && Array.isArray(parsed(res.text)?.jobs) && parsed(res.text).jobs.length === 0
      ? undefined
      : `a claim answered ${res.status} ${res.text.slice(0, 300)}, not 200 with no jobs`;
  };
  try {
    for (const op of ops) {
      const why = await claimStep(op);
      if (why) {
        report.why = `${why} (after ${JSON.stringify(ops.slice(0, ops.indexOf(op)))})`;
        return report;
      }
    }
    return report;
  } finally {
    for (const w of waiting) w.close();
  }

  /**
   * Puts right the claims taken for waiting that were answered since: a refusal slower than
   * {@link WAITING_MS} (in its shape), never a claim that ended early with jobs or an error.
   */
  function reconcile(r: FuzzRequest): string | undefined {
    for (const w of waiting.filter((x) => x.since !== undefined)) {
      const res = w.since as FuzzResponse;
      waiting.splice(waiting.indexOf(w), 1);
      const why = violation(r, res) ?? (res.status === 429 ? tooManyClaims(res) : undefined);
      if (why) return why;
      if (res.status !== 429)
        return `a waiting claim answered before its waitMs: ${res.status} ${res.text.slice(0, 300)}`;
    }
    return undefined;
  }

  async function claimStep(op: ClaimOp): Promise<string | undefined> {
    switch (op.op) {
      case 'drop': {
        const [w] = waiting.splice(op.which % Math.max(1, waiting.length), 1);
        w?.close();
        return undefined;
      }
      case 'now':
      case 'other': {
        const r = op.op === 'now' ? claim(0) : claim(150, server.otherWorker);
        const { answer } = await send(r, 5000);
        report.seen.push(`${op.op} ${answer?.status}`);
        if (!answer) return `a claim (${op.op}) was not answered`;
        const why = noJobs(r, answer);
        return why && `${op.op === 'now' ? 'a claim that does not wait' : "another worker's claim"}: ${why}`;
      }
      case 'wait':
      case 'short': {
        const waitMs = op.op === 'wait' ? 30_000 : 150;
        const r = claim(waitMs);
        if (waiting.length >= BOUNDS.waitingClaims) {
          const { h, answer } = await send(r, 2000);
          report.seen.push(`${op.op} past the bound ${answer?.status ?? 'waiting'}`);
          if (answer) return violation(r, answer) ?? tooManyClaims(answer);
          const wrong = reconcile(r);
          if (wrong) return wrong;
          if (waiting.length < BOUNDS.waitingClaims) {
            waiting.push({ close: h.close });
            return undefined;
          }
          h.close();
          return `past MAX_WAITING_CLAIMS (${waiting.length} waiting), a claim waited`;
        }
        // Below the bound, a refusal may only be a place not yet given back (a claim dropped a moment ago).
        const deadline = Date.now() + GIVEN_BACK_MS;
        for (;;) {
          const { h, answer } = await send(r, op.op === 'wait' ? WAITING_MS : 5000);
          report.seen.push(`${op.op} ${answer?.status ?? 'waiting'}`);
          if (!answer) {
            const w: (typeof waiting)[number] = { close: h.close };
            h.answer.then(
              (a) => {
                w.since = asResponse(a);
              },
              () => {},
            );
            waiting.push(w);
            return undefined;
          }
          const why = violation(r, answer);
          if (why) return why;
          if (answer.status !== 429)
            return op.op === 'short'
              ? noJobs(r, answer)
              : `a waiting claim answered at once: ${answer.status} ${answer.text.slice(0, 300)}`;
          const shape = tooManyClaims(answer);
          if (shape) return shape;
          if (Date.now() > deadline)
            return `with ${waiting.length} of ${BOUNDS.waitingClaims} claims waiting, one more was still refused after ${GIVEN_BACK_MS} ms: a dropped claim did not give its place back`;
          await sleep(25);
        }
      }
    }
  }
}
