import fc from 'fast-check';
import {
  bytes,
  clean,
  type Fields,
  field,
  hostile,
  idOf,
  mutated,
  numberText,
  optional,
  query,
  segmentOf,
  shape,
} from './values.js';

/** One generated HTTP request: who sends it, and the bytes of it. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** JSON (or not) text; deep-nesting markers still in it. */
  body?: string;
  /** Send only this many bytes of the body, then hang up (a worker that died mid-upload). */
  hangUpAfter?: number;
  /**
   * Whose credentials: a caller of the run, its worker (WORKERS), an unknown key, or none; `local`:
   * none, to a server that serves anonymous callers (its machine's user, who may work too).
   */
  as: 'alice' | 'bob' | 'robot' | 'badkey' | 'nobody' | 'local';
}

/** What the fuzz knows of the server: the tasks made before it, the tenants of its principals. */
export interface Known {
  taskIds: readonly string[];
  tenants: readonly string[];
}

const who = fc.constantFrom<FuzzRequest['as']>(
  'alice',
  'alice',
  'alice',
  'bob',
  'bob',
  'robot',
  'badkey',
  'nobody',
);
const oddMethod = fc.constantFrom(
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'HEAD',
  'PROPFIND',
  'FOO',
);
const method = (usual: string) =>
  fc.oneof({ weight: 9, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: oddMethod });

/** Headers a hostile caller varies (the route's own ones are added by each route). */
const oddHeaders = fc.record(
  {
    'Content-Type': fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/a2a+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
      'multipart/form-data; boundary=x',
      '',
      ';;;',
    ),
    'Content-Encoding': fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'x-unknown', 'gzip, br', ''),
    'Last-Event-ID': fc.constantFrom('0', '1', '-1', '999999999999', 'abc', '1.5', '', ' 2 '),
    'A2A-Version': fc.constantFrom('1.0', '0.3', '1.0.0', '0.3.0', '1.0.5', '1', '2.0', '', 'x', ' 1.0 '),
    Accept: fc.constantFrom(
      'application/json',
      'text/event-stream',
      '*/*',
      'text/html',
      'application/xml',
      '',
    ),
    'A2A-Extensions': fc.constantFrom('https://taskhandle.dev/extensions/task-handle/v1', 'x, y', ',,'),
    Prefer: fc.constantFrom(
      'respond-async',
      'wait=1',
      'wait=abc',
      'wait=-1',
      'wait="1"',
      ';;',
      'respond-async, wait=1',
    ),
    'Idempotency-Key': fc.constantFrom('k1', 'k2', '', ' ', 'x'.repeat(300), 'é'),
    Range: fc.constantFrom(
      'bytes=0-10',
      'bytes=-5',
      'bytes=99999999-',
      'bytes=5-1',
      'bytes=0-1,3-4',
      'lines=1-2',
      'bytes=-0',
    ),
  },
  { requiredKeys: [] },
);

/** Usually the headers a well-behaved client sends; otherwise hostile ones. */
const mostly = fc.nat(2).map((n) => n > 0);

/** A body where the route takes none (GET, DELETE...): mostly none, now and then one over the limit. */
const strayBody = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(40_000), '{"a":1}', '') },
);

const json = (value: unknown): string => JSON.stringify(value) ?? 'null';
const bodyText = (value: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 12, arbitrary: value.map(json) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('', '{', 'not json', '[1,2', '{"a":1}}', 'null', 'true', '"x"', '[]'),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 50 }) },
  );

const skillData = shape({
  skill: field(fc.constantFrom('export', 'sleep', 'approval', 'batch', 'render', 'nope')),
  input: optional(
    shape({
      rows: optional(fc.integer({ min: 0, max: 50 })),
      format: optional(fc.constantFrom('csv', 'ndjson', 'xml')),
      seconds: optional(fc.constantFrom(0, 0.1, 30)),
      action: optional(fc.string({ maxLength: 20 })),
      approver: optional(fc.constantFrom('globex/bob', 'acme/alice', 'nobody')),
    }),
  ),
});

function v1Message(k: Known) {
  const part = shape({
    text: optional(fc.string({ maxLength: 30 })),
    data: optional(skillData),
    url: optional(fc.constantFrom('https://example.com/f', 'not a url')),
    raw: optional(fc.constantFrom('aGVsbG8=', '***')),
    mediaType: optional(fc.constantFrom('text/plain', '')),
    metadata: optional(shape({ a: optional(fc.string()) })),
  });
  return shape({
    messageId: field(fc.uuid()),
    role: field(fc.constantFrom('ROLE_USER', 'ROLE_AGENT', 'user', 'ROLE_UNSPECIFIED')),
    parts: field(fc.array(part, { maxLength: 3 })),
    contextId: optional(fc.string({ maxLength: 20 })),
    taskId: optional(idOf(k.taskIds)),
    metadata: optional(shape({ note: optional(fc.string()) })),
    extensions: optional(fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 })),
  });
}

const pushUrl = fc.constantFrom(
  'https://example.com/hook',
  'http://127.0.0.1:9/x',
  'ftp://x',
  'not a url',
  '',
);

function v1Params(k: Known): Record<string, fc.Arbitrary<unknown>> {
  const id = idOf(k.taskIds);
  const pushConfig = shape({
    taskId: field(id),
    id: optional(fc.string({ maxLength: 10 })),
    url: field(pushUrl),
    token: optional(fc.string({ maxLength: 10 })),
    authentication: optional(
      shape({ scheme: field(fc.constantFrom('Bearer', '')), credentials: optional(fc.string()) }),
    ),
  });
  const send = shape({
    message: field(v1Message(k)),
    configuration: optional(
      shape({
        returnImmediately: optional(fc.boolean()),
        historyLength: optional(fc.integer({ min: -1, max: 5 })),
        acceptedOutputModes: optional(fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 })),
        taskPushNotificationConfig: optional(pushConfig),
      }),
    ),
    metadata: optional(shape({ a: optional(fc.string()) })),
    tenant: optional(fc.constantFrom(...k.tenants)),
  });
  return {
    SendMessage: send,
    SendStreamingMessage: send,
    GetTask: shape({ id: field(id), historyLength: optional(fc.integer({ min: -1, max: 5 })) }),
    ListTasks: shape({
      pageSize: optional(fc.integer({ min: -1, max: 120 })),
      pageToken: optional(fc.string({ maxLength: 20 })),
      contextId: optional(fc.string({ maxLength: 10 })),
      status: optional(fc.constantFrom('TASK_STATE_COMPLETED', 'TASK_STATE_WORKING', 'nope', 3)),
      historyLength: optional(fc.integer({ min: -1, max: 5 })),
      includeArtifacts: optional(fc.boolean()),
      statusTimestampAfter: optional(fc.constantFrom('2020-01-01T00:00:00Z', 'yesterday')),
    }),
    CancelTask: shape({ id: field(id) }),
    SubscribeToTask: shape({ id: field(id) }),
    CreateTaskPushNotificationConfig: pushConfig,
    GetTaskPushNotificationConfig: shape({ taskId: field(id), id: field(fc.string({ maxLength: 10 })) }),
    DeleteTaskPushNotificationConfig: shape({ taskId: field(id), id: field(fc.string({ maxLength: 10 })) }),
    ListTaskPushNotificationConfigs: shape({ taskId: field(id), pageSize: optional(fc.integer()) }),
    GetExtendedAgentCard: shape({}),
  };
}

function v03Params(k: Known): Record<string, fc.Arbitrary<unknown>> {
  const id = idOf(k.taskIds);
  const part = fc.oneof(
    shape({ kind: field(fc.constant('text')), text: field(fc.string({ maxLength: 30 })) }),
    shape({ kind: field(fc.constant('data')), data: field(skillData) }),
    shape({
      kind: field(fc.constant('file')),
      file: field(
        shape({ uri: optional(fc.constant('https://example.com/f')), bytes: optional(fc.constant('aGk=')) }),
      ),
    }),
  );
  const message = shape({
    kind: optional(fc.constant('message')),
    messageId: field(fc.uuid()),
    role: field(fc.constantFrom('user', 'agent', 'ROLE_USER')),
    parts: field(fc.array(part, { maxLength: 3 })),
    contextId: optional(fc.string({ maxLength: 20 })),
    taskId: optional(id),
    metadata: optional(shape({ a: optional(fc.string()) })),
  });
  const pushConfig = shape({
    url: field(pushUrl),
    id: optional(fc.string({ maxLength: 10 })),
    token: optional(fc.string({ maxLength: 10 })),
    authentication: optional(shape({ schemes: field(fc.array(fc.constantFrom('Bearer', ''))) })),
  });
  const send = shape({
    message: field(message),
    configuration: optional(
      shape({
        blocking: optional(fc.boolean()),
        historyLength: optional(fc.integer({ min: -1, max: 5 })),
        pushNotificationConfig: optional(pushConfig),
      }),
    ),
  });
  return {
    'message/send': send,
    'message/stream': send,
    'tasks/get': shape({ id: field(id), historyLength: optional(fc.integer({ min: -1, max: 5 })) }),
    'tasks/cancel': shape({ id: field(id) }),
    'tasks/resubscribe': shape({ id: field(id) }),
    'tasks/pushNotificationConfig/set': shape({
      taskId: field(id),
      pushNotificationConfig: field(pushConfig),
    }),
    'tasks/pushNotificationConfig/get': shape({
      id: field(id),
      pushNotificationConfigId: optional(fc.string()),
    }),
    'tasks/pushNotificationConfig/list': shape({ id: field(id) }),
    'tasks/pushNotificationConfig/delete': shape({
      id: field(id),
      pushNotificationConfigId: field(fc.string()),
    }),
    'agent/getAuthenticatedExtendedCard': shape({}),
  };
}

/** JSON-RPC on `POST /`: either version's methods (and unknown ones), envelopes mutated. */
function jsonRpc(k: Known): fc.Arbitrary<FuzzRequest> {
  const methods = { '1.0': v1Params(k), '0.3': v03Params(k) };
  const call = fc.constantFrom<'1.0' | '0.3'>('1.0', '0.3').chain((version) => {
    const params = methods[version];
    const name = fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom(...Object.keys(params)) },
      { weight: 1, arbitrary: fc.constantFrom('tasks/teleport', '', 'GetTask ', '__proto__', 'constructor') },
    );
    return fc.tuple(fc.constant(version), name).chain(([v, m]) =>
      fc.record({
        version: fc.constant(v),
        envelope: shape({
          jsonrpc: field(fc.constant('2.0')),
          id: optional(fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null))),
          method: field(fc.constant(m)),
          params: optional(Object.hasOwn(params, m) ? (params[m] as fc.Arbitrary<unknown>) : shape({})),
        }),
      }),
    );
  });
  return fc
    .record({
      call,
      path: fc.constantFrom('/', '/', '/', '/?A2A-Version=1.0', '/?x=%ZZ'),
      headers: oddHeaders,
      usualHeaders: mostly,
      as: who,
      method: method('POST'),
      text: fc.oneof(
        { weight: 20, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: bodyText(hostile) },
      ),
    })
    .map(({ call, path, headers, usualHeaders, as, method, text }) => ({
      method,
      path,
      as,
      headers: usualHeaders
        ? { 'Content-Type': 'application/json', ...(call.version === '1.0' ? { 'A2A-Version': '1.0' } : {}) }
        : headers,
      body: text ?? json(call.envelope),
    }));
}

/** MCP's `_meta`: none (2025-11-25), or 2026-07-28's per-request fields, with or without the Tasks extension. */
const mcpMeta = fc.oneof(
  fc.constant(undefined),
  shape({
    'io.modelcontextprotocol/protocolVersion': field(fc.constantFrom('2026-07-28', '2025-11-25', 'x')),
    'io.modelcontextprotocol/clientCapabilities': optional(
      fc.constantFrom({}, { extensions: { 'io.modelcontextprotocol/tasks': {} } }, { extensions: 1 }),
    ),
    progressToken: optional(fc.oneof(fc.integer(), fc.string({ maxLength: 8 }))),
    'taskhandle/idempotencyKey': optional(fc.constantFrom('k1', '', 'x'.repeat(300))),
  }),
);

function mcpParams(k: Known): Record<string, fc.Arbitrary<unknown>> {
  const taskId = idOf(k.taskIds);
  const withMeta = (fields: Record<string, fc.Arbitrary<unknown>>) => shape({ ...fields, _meta: mcpMeta });
  const input = shape({
    rows: optional(fc.integer({ min: 0, max: 50 })),
    seconds: optional(fc.constantFrom(0, 0.1, 30)),
    action: optional(fc.string({ maxLength: 20 })),
    approver: optional(fc.constantFrom('globex/bob', 'acme/alice', 'nobody')),
  });
  const answer = shape({
    action: field(fc.constantFrom('accept', 'decline', 'cancel', 'maybe')),
    content: optional(shape({ answer: optional(fc.constantFrom('approve', 'reject', '')) })),
  });
  return {
    initialize: withMeta({ protocolVersion: optional(fc.constantFrom('2025-11-25', '2024-01-01')) }),
    ping: withMeta({}),
    'server/discover': withMeta({}),
    'tools/list': withMeta({ cursor: optional(fc.string({ maxLength: 8 })) }),
    'tools/call': withMeta({
      name: field(fc.constantFrom('export', 'sleep', 'approval', 'batch', 'render', 'nope')),
      arguments: optional(input),
      task: optional(shape({ ttl: optional(fc.integer()) })),
    }),
    'tasks/get': withMeta({ taskId: field(taskId) }),
    'tasks/result': withMeta({ taskId: field(taskId) }),
    'tasks/list': withMeta({ cursor: optional(fc.string({ maxLength: 12 })) }),
    'tasks/cancel': withMeta({ taskId: field(taskId) }),
    'tasks/update': withMeta({
      taskId: field(taskId),
      inputResponses: field(fc.dictionary(fc.constantFrom('ask-1', 'ask-4', 'x'), answer, { maxKeys: 2 })),
    }),
    'subscriptions/listen': withMeta({
      notifications: field(
        shape({
          taskIds: optional(fc.array(taskId, { maxLength: 3 })),
          toolsListChanged: optional(fc.constantFrom(true, false, 'yes')),
          resourceSubscriptions: optional(fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 })),
        }),
      ),
    }),
  };
}

/**
 * The standard headers of a 2026-07-28 request, as its body says (else it is refused with -32020
 * before its method runs): so that the fuzz reaches each method of that revision too.
 */
function modernHeaders(message: unknown): Record<string, string> {
  const m = message as { method?: unknown; params?: Record<string, unknown> } | undefined;
  const meta = m?.params?._meta as Record<string, unknown> | undefined;
  if (meta?.['io.modelcontextprotocol/protocolVersion'] !== '2026-07-28' || typeof m?.method !== 'string')
    return {};
  const name = m.params?.taskId ?? m.params?.name;
  // Only what a header can carry: fetch refuses to send a value with a control character at all.
  const sendable = (v: unknown): v is string => typeof v === 'string' && /^[\x20-\x7e]*$/.test(v);
  return {
    'MCP-Protocol-Version': '2026-07-28',
    ...(sendable(m.method) ? { 'Mcp-Method': m.method } : {}),
    ...(sendable(name) ? { 'Mcp-Name': name } : {}),
  };
}

/** MCP on `POST /mcp`: its methods (and unknown ones), requests, notifications and responses. */
function mcp(k: Known): fc.Arbitrary<FuzzRequest> {
  const params = mcpParams(k);
  const name = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...Object.keys(params)) },
    { weight: 1, arbitrary: fc.constantFrom('tasks/teleport', 'notifications/initialized', '__proto__') },
  );
  const request = name.chain((m) =>
    shape({
      jsonrpc: field(fc.constant('2.0')),
      id: optional(fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null))),
      method: field(fc.constant(m)),
      params: optional(Object.hasOwn(params, m) ? (params[m] as fc.Arbitrary<unknown>) : shape({})),
    }),
  );
  // A response to an elicitation of ours: its id names a task and a question.
  const response = shape({
    jsonrpc: field(fc.constant('2.0')),
    id: field(
      fc.oneof(
        idOf(k.taskIds).map((t) => `input:ask-4:${t}`),
        fc.string({ maxLength: 12 }),
      ),
    ),
    result: optional(
      shape({ action: field(fc.constantFrom('accept', 'decline')), content: optional(shape({})) }),
    ),
  });
  return fc
    .record({
      message: fc.oneof({ weight: 6, arbitrary: request }, { weight: 1, arbitrary: response }),
      path: fc.constantFrom('/mcp', '/mcp', '/mcp/', '/mcp?x=1'),
      headers: oddHeaders,
      usualHeaders: mostly,
      as: who,
      method: method('POST'),
      text: fc.oneof(
        { weight: 20, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: bodyText(hostile) },
      ),
    })
    .map(({ message, path, headers, usualHeaders, as, method, text }) => ({
      method,
      path,
      as,
      headers: usualHeaders
        ? {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            ...modernHeaders(message),
          }
        : { ...headers, 'MCP-Protocol-Version': '2025-11-25' },
      body: text ?? json(message),
    }));
}

/** A REST route: its method, path (after the face's prefix) and body. */
type Route = [method: string, path: fc.Arbitrary<string>, body?: fc.Arbitrary<unknown>];

function rest(k: Known): fc.Arbitrary<FuzzRequest> {
  const seg = segmentOf(k.taskIds);
  const v1 = v1Params(k);
  const tenantPrefix = fc.oneof(
    { weight: 3, arbitrary: fc.constant('') },
    { weight: 2, arbitrary: fc.constantFrom(...k.tenants).map((t) => `/${t}`) },
    { weight: 1, arbitrary: seg.map((s) => `/${s}`) },
  );
  const taskQuery = query({ historyLength: numberText, tenant: fc.constantFrom(...k.tenants) });
  const listQuery = query({
    pageSize: numberText,
    pageToken: fc.string({ maxLength: 10 }),
    status: fc.constantFrom('TASK_STATE_COMPLETED', 'nope'),
    includeArtifacts: fc.constantFrom('true', 'x'),
    historyLength: numberText,
  });
  const p = (...parts: fc.Arbitrary<string>[]) => fc.tuple(...parts).map((xs) => xs.join(''));
  const c = fc.constant;
  const routesV1: Route[] = [
    ['POST', c('/message:send'), v1.SendMessage],
    ['POST', c('/message:stream'), v1.SendStreamingMessage],
    ['GET', p(c('/tasks/'), seg, taskQuery)],
    ['GET', p(c('/tasks'), listQuery)],
    ['POST', p(c('/tasks/'), seg, c(':cancel'))],
    ['GET', p(c('/tasks/'), seg, c(':subscribe'))],
    ['POST', p(c('/tasks/'), seg, c(':subscribe'))],
    ['POST', p(c('/tasks/'), seg, c('/pushNotificationConfigs')), v1.CreateTaskPushNotificationConfig],
    ['GET', p(c('/tasks/'), seg, c('/pushNotificationConfigs'))],
    ['GET', p(c('/tasks/'), seg, c('/pushNotificationConfigs/'), seg)],
    ['DELETE', p(c('/tasks/'), seg, c('/pushNotificationConfigs/'), seg)],
    ['GET', c('/extendedAgentCard')],
    ['GET', p(c('/'), seg)],
  ];
  const legacyMessage = shape({
    messageId: field(fc.uuid()),
    role: field(fc.constantFrom('ROLE_USER', 'user')),
    content: field(fc.array(shape({ text: optional(fc.string({ maxLength: 20 })) }), { maxLength: 2 })),
    contextId: optional(fc.string({ maxLength: 10 })),
    taskId: optional(idOf(k.taskIds)),
  });
  const legacySend = shape({
    message: field(legacyMessage),
    configuration: optional(
      shape({ blocking: optional(fc.boolean()), historyLength: optional(fc.integer()) }),
    ),
  });
  const routesV03: Route[] = [
    ['POST', c('/v1/message:send'), legacySend],
    ['POST', c('/v1/message:stream'), legacySend],
    ['GET', p(c('/v1/tasks/'), seg, taskQuery)],
    ['POST', p(c('/v1/tasks/'), seg, c(':cancel'))],
    ['GET', p(c('/v1/tasks/'), seg, c(':subscribe'))],
    [
      'POST',
      p(c('/v1/tasks/'), seg, c('/pushNotificationConfigs')),
      shape({
        pushNotificationConfig: field(shape({ url: field(fc.constantFrom('https://example.com/h', '')) })),
      }),
    ],
    ['GET', p(c('/v1/tasks/'), seg, c('/pushNotificationConfigs'))],
    ['GET', p(c('/v1/tasks/'), seg, c('/pushNotificationConfigs/'), seg)],
    ['DELETE', p(c('/v1/tasks/'), seg, c('/pushNotificationConfigs/'), seg)],
    ['GET', c('/v1/card')],
  ];
  const v1Route = fc.constantFrom(...routesV1).chain(([m, path, body]) =>
    fc.record({
      version: fc.constantFrom('1.0', '1.0', '1.0', '0.3', '2.0'),
      method: method(m),
      path: p(tenantPrefix, path),
      body: body ? bodyText(body).map((b) => b as string | undefined) : fc.constant(undefined),
    }),
  );
  const v03Route = fc.constantFrom(...routesV03).chain(([m, path, body]) =>
    fc.record({
      version: fc.constantFrom('', '', '0.3', '1.0'),
      method: method(m),
      path,
      body: body ? bodyText(body).map((b) => b as string | undefined) : fc.constant(undefined),
    }),
  );
  return fc
    .record({
      route: fc.oneof(v1Route, v03Route),
      headers: oddHeaders,
      usual: mostly,
      as: who,
      stray: strayBody,
    })
    .map(({ route, headers, usual, as, stray }) => ({
      method: route.method,
      path: `/rest${route.path}`,
      as,
      headers: usual
        ? { 'Content-Type': 'application/json', ...(route.version ? { 'A2A-Version': route.version } : {}) }
        : headers,
      body: route.body ?? stray,
    }));
}

function jobs(k: Known): fc.Arbitrary<FuzzRequest> {
  const seg = segmentOf(k.taskIds);
  const p = (...parts: fc.Arbitrary<string>[]) => fc.tuple(...parts).map((xs) => xs.join(''));
  const c = fc.constant;
  const newJob = skillData;
  const answer = fc.oneof(
    shape({ text: field(fc.string({ maxLength: 20 })) }),
    shape({ data: field(hostile) }),
  );
  const routes: Route[] = [
    ['POST', c('/v1/jobs'), newJob],
    ['GET', p(c('/v1/jobs'), query({ pageSize: numberText, pageToken: fc.string({ maxLength: 10 }) }))],
    ['GET', p(c('/v1/jobs/'), seg, query({ follow: fc.constantFrom('result', 'x') }))],
    ['GET', p(c('/v1/jobs/'), seg, c('/result'), query({ download: fc.constantFrom('1', '0') }))],
    ['GET', p(c('/v1/jobs/'), seg, c('/events'))],
    ['GET', p(c('/v1/jobs/'), seg, c('/artifacts/'), seg)],
    ['DELETE', p(c('/v1/jobs/'), seg)],
    ['POST', p(c('/v1/jobs/'), seg, c(':cancel'))],
    ['POST', p(c('/v1/jobs/'), seg, c(':input')), answer],
    ['POST', p(c('/v1/jobs/'), seg, fc.constantFrom(':nope', ':', '::input'))],
    ['GET', c('/v1/openapi.json')],
    ['GET', p(c('/v1/'), seg)],
  ];
  return routeRequests(routes);
}

function inbox(k: Known): fc.Arbitrary<FuzzRequest> {
  const seg = segmentOf(k.taskIds);
  const p = (...parts: fc.Arbitrary<string>[]) => fc.tuple(...parts).map((xs) => xs.join(''));
  const c = fc.constant;
  const answer = fc.oneof(
    shape({ decision: field(fc.constantFrom('approve', 'reject', 'maybe')), comment: optional(fc.string()) }),
    shape({ text: field(fc.string({ maxLength: 20 })) }),
  );
  const routes: Route[] = [
    ['GET', c('/inbox/api/waiting')],
    ['POST', p(c('/inbox/api/tasks/'), seg, c('/answer')), answer],
    ['GET', c('/inbox/api/events')],
    ['GET', p(c('/inbox/api/'), seg)],
    ['GET', fc.constantFrom('/inbox/', '/inbox', '/inbox/app.js', '/inbox/%ZZ')],
  ];
  return routeRequests(routes);
}

/** Everything else a caller may try: the well-known documents, health, paths that are nothing. */
function other(k: Known): fc.Arbitrary<FuzzRequest> {
  const seg = segmentOf(k.taskIds);
  const routes: Route[] = [
    [
      'GET',
      fc.constantFrom(
        '/healthz',
        '/.well-known/agent-card.json',
        '/.well-known/jwks.json',
        '/.well-known/agent-card-jwks.json',
      ),
    ],
    ['GET', seg.map((s) => `/${s}`)],
    ['POST', seg.map((s) => `/${s}`), hostile],
    ['GET', fc.constantFrom('/%', '//', '/rest%2Fv1', '/v1%2Fjobs', '/..%2F..%2Fetc', '/?%ZZ')],
  ];
  return routeRequests(routes);
}

/**
 * Stand-ins for a task claimed for real and its claim's lease token: `workers(k, true)` aims its
 * requests at them, {@link aimedAt} puts the real ones in before they are sent.
 */
export const HELD_TASK = 'held-task';
export const HELD_LEASE = 'held-lease';
/** The held token upper-cased: one that looks right and is not. */
const HELD_LEASE_UPPER = 'HELD-LEASE-UPPER';
/** The held task's id upper-cased: another task, if any. */
const HELD_TASK_UPPER = 'HELD-TASK-UPPER';

/** `r` aimed at the task `taskId` its claim's `token` holds. */
export function aimedAt(r: FuzzRequest, taskId: string, token: string): FuzzRequest {
  const lease = (v: string) =>
    v.replaceAll(HELD_LEASE_UPPER, token.toUpperCase()).replaceAll(HELD_LEASE, token);
  return {
    ...r,
    path: r.path
      .replaceAll(HELD_TASK_UPPER, encodeURIComponent(taskId.toUpperCase()))
      .replaceAll(HELD_TASK, encodeURIComponent(taskId)),
    headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, lease(v)])),
  };
}

/** Mostly the worker; now and then a caller (403), an unknown key or nobody (401). */
const asWorker = fc.constantFrom<FuzzRequest['as']>(
  'robot',
  'robot',
  'robot',
  'robot',
  'robot',
  'robot',
  'alice',
  'bob',
  'badkey',
  'nobody',
);

/** The Lease-Token header (`undefined`: none): the held one, when there is one, else a wrong one. */
function leaseHeader(held: boolean): fc.Arbitrary<string | undefined> {
  const wrong = fc.oneof(
    { weight: 2, arbitrary: fc.constant(undefined) },
    // Real-looking: the form a claim gives, holding nothing.
    { weight: 3, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9-]{1,100}$/) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '-',
        'a'.repeat(100),
        'a'.repeat(101),
        'x'.repeat(8000),
        // Over Node's header limit: answered 431 before any face.
        'x'.repeat(20_000),
        'tökén',
        '\u00ff\u00fe',
        '11111111-2222-3333-4444-555555555555',
        '00000000-0000-0000-0000-000000000000',
        'null',
        'a b',
        'a,b',
        '../x',
        '%41',
        '*',
      ),
    },
  );
  if (!held) return wrong;
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant(HELD_LEASE) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        `${HELD_LEASE}0`,
        ` ${HELD_LEASE} `,
        `${HELD_LEASE},${HELD_LEASE}`,
        `${HELD_LEASE}${'0'.repeat(70)}`,
        HELD_LEASE_UPPER,
      ),
    },
    { weight: 2, arbitrary: wrong },
  );
}

/** Text over the worker bodies' bound on text fields (16384 characters; a part's text has none). */
const longText = fc.constant('x'.repeat(16_385));
const someText = fc.oneof(
  { weight: 6, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constant('x'.repeat(16_384)) },
);
/** Text of 1 to 255 characters, and what is out of that bound. */
const name = fc.constantFrom('result', 'out.png', 'é', 'x'.repeat(255));
const badName = fc.constantFrom('', 'x'.repeat(256));

const base64 = fc.oneof(
  fc.base64String({ maxLength: 40 }),
  fc.constantFrom('aGVsbG8=', '', 'A'.repeat(24_000)),
);
const badBase64 = fc.constantFrom('***', 'aGVsbG8', '=', '====', 'a=b', 'aGk=\n', ' aGk=', 'aGk-_w');

/** An artifact id: the ones a run reuses (so appends meet their artifact), and ones out of bounds. */
const artifactId = fc.constantFrom('out', 'log', 'a.b_c:d-1', 'x'.repeat(128));
const badArtifactId = fc.constantFrom('x'.repeat(129), '', '../x', 'a/b', ' a', '-a', 'é', '%2F');

/** The bodies of the job writes (docs/workers.md), made with `f`: clean or mutated. */
function workerBodies(f: Fields) {
  const metadata = f.shape({
    note: f.optional(fc.string({ maxLength: 10 })),
    n: f.optional(fc.integer()),
  });
  const badMetadata = fc.constantFrom({ ['k'.repeat(201)]: 1 }, [1], 'note');
  // Exactly one of text, raw, url and data (mutated: now and then none or two), and what goes with it.
  const content = fc.oneof(
    { weight: 3, arbitrary: f.shape({ text: f.value(fc.string({ maxLength: 30 }), longText) }) },
    { weight: 2, arbitrary: f.shape({ raw: f.value(base64, badBase64) }) },
    {
      weight: 1,
      arbitrary: f.shape({
        url: f.value(
          fc.constantFrom('https://example.com/f.png', 'http://127.0.0.1:9/x', 'file:///etc/passwd'),
          fc.constantFrom('not a url', '', `https://example.com/${'x'.repeat(8200)}`),
        ),
      }),
    },
    {
      weight: 2,
      arbitrary: f.shape({
        data: f.value(fc.oneof(fc.constant({ width: 640 }), fc.jsonValue({ maxDepth: 3 })), hostile),
      }),
    },
  );
  const part = fc
    .tuple(
      f.value(content, fc.constantFrom({}, { text: 'a', data: 1 }, { raw: 'aGk=', url: 'https://x.y' })),
      f.shape({
        filename: f.optional(name, fc.constantFrom('', 'x'.repeat(256), 'a\u0000b')),
        mediaType: f.optional(fc.constantFrom('image/png', 'text/plain', 'not a type'), badName),
        metadata: f.optional(metadata, badMetadata),
      }),
    )
    .map(([what, about]) => (isObject(about) && isObject(what) ? { ...about, ...what } : what));
  const artifact = f.shape({
    artifactId: f.optional(artifactId, badArtifactId),
    name: f.optional(name, badName),
    description: f.optional(someText, longText),
    parts: f.value(
      fc.array(part, { minLength: 1, maxLength: 3 }),
      fc.constantFrom(
        [],
        Array.from({ length: 65 }, () => ({ text: 'x' })),
      ),
    ),
    metadata: f.optional(metadata, badMetadata),
    append: f.optional(fc.boolean()),
    lastChunk: f.optional(fc.boolean()),
  });
  return {
    progress: f.shape({
      percent: f.optional(
        fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 100, noNaN: true })),
        fc.constantFrom(-1, 100.0001, 101, 1e308, -1e308, 2 ** 53, '50'),
      ),
      message: f.optional(someText, longText),
    }),
    status: f.shape({
      text: f.value(
        someText.filter((t) => t !== ''),
        fc.constantFrom('', ...['x'.repeat(16_385)]),
      ),
    }),
    artifacts: artifact,
    ask: f.shape({
      prompt: f.value(
        someText.filter((t) => t !== ''),
        fc.constantFrom('', 'x'.repeat(16_385)),
      ),
      schema: f.optional(
        fc.constantFrom(
          { enum: ['crop', 'pad'] },
          {},
          { type: 'object', properties: { a: { type: 'string' } } },
        ),
        fc.constantFrom([], 'string', null),
      ),
      approvers: f.optional(
        fc.array(fc.constantFrom('acme/alice', 'globex/bob', 'jwt:acme/x', 'role:ops'), { maxLength: 3 }),
        fc.constantFrom(
          ['nobody'],
          [''],
          ['*'],
          ['x'.repeat(301)],
          Array.from({ length: 51 }, (_, i) => `acme/p${i}`),
        ),
      ),
      deadlineMs: f.optional(
        fc.constantFrom(1000, 86_400_000, 366 * 86_400_000),
        fc.constantFrom(366 * 86_400_000 + 1, 0, -1, 1.5, 1e308, 2 ** 53, '1000'),
      ),
    }),
    complete: f.shape({
      message: f.optional(someText, longText),
      state: f.optional(
        fc.constantFrom('completed', 'rejected'),
        fc.constantFrom('failed', 'canceled', 'input-required', ''),
      ),
      artifacts: f.optional(
        fc.array(artifact, { maxLength: 2 }),
        fc.constant(Array.from({ length: 33 }, () => ({ parts: [{ text: 'x' }] }))),
      ),
    }),
    fail: f.shape({
      message: f.value(
        someText.filter((t) => t !== ''),
        fc.constantFrom('', 'x'.repeat(16_385)),
      ),
      code: f.optional(fc.constantFrom('bad-image', 'ECONNRESET'), fc.constantFrom('', 'x'.repeat(101))),
      retryable: f.optional(fc.boolean()),
    }),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** A job write's body: clean (it reaches the lease check, or with the lease the task) or mutated. */
const writeBodies = (() => {
  const a = workerBodies(clean);
  const b = workerBodies(mutated);
  type Action = keyof typeof a;
  return (action: Action, cleanWeight: number) =>
    fc.oneof({ weight: cleanWeight, arbitrary: a[action] }, { weight: 2, arbitrary: b[action] });
})();

/**
 * A claim's body. A valid claim holds its request up to `waitMs` (30000 when not given): every body
 * here names one that is invalid or at most 50 ms, and no text here parses as an object without it
 * (an empty body would be `{}`), so the fuzz never waits on a claim.
 */
const claimBody: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .record({
        claim: fc.record(
          {
            skills: fc.oneof(
              { weight: 4, arbitrary: fc.constant(['render']) },
              {
                weight: 2,
                arbitrary: fc.constantFrom(
                  [],
                  ['export'],
                  ['nope'],
                  ['render', 'render'],
                  ['Render'],
                  ['../x'],
                  ['x'.repeat(65)],
                  Array.from({ length: 65 }, () => 'render'),
                ),
              },
              { weight: 1, arbitrary: hostile },
            ),
            max: fc.oneof(
              { weight: 3, arbitrary: fc.integer({ min: 1, max: 32 }) },
              { weight: 1, arbitrary: fc.constantFrom(0, 33, -1, 1.5, '1', null, 1e308) },
            ),
            worker: fc.oneof(
              { weight: 3, arbitrary: fc.constantFrom('gpu-1', 'w@host:1', 'a') },
              { weight: 1, arbitrary: fc.constantFrom('', '-a', 'x'.repeat(65), 'a b', 'é', 7) },
            ),
          },
          { requiredKeys: [] },
        ),
        waitMs: fc.constantFrom(0, 0, 1, 50, -1, 60_001, 1e12, '10', '0', null, 0.5, 2 ** 53, true, [], {}),
        extra: fc.oneof(
          { weight: 4, arbitrary: fc.constant({}) },
          {
            weight: 1,
            arbitrary: fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), hostile, { maxKeys: 2 }),
          },
        ),
      })
      .map(({ claim, waitMs, extra }) => json({ ...extra, ...claim, waitMs })),
  },
  // Not an object: refused, never read as the defaults.
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '[]',
      'null',
      '"x"',
      '7',
      '{',
      'not json',
      '{"waitMs":50',
      '{"waitMs":5e1}',
      '{"waitMs":1e-400}',
      '[{"waitMs":0}]',
      `{"waitMs":0,"x":${'['.repeat(70)}${']'.repeat(70)}}`,
      `{"waitMs":0,"worker":"${'x'.repeat(40_000)}"}`,
    ),
  },
);

/** A file's bytes for an upload: none, a few, large, at and past MAX_ARTIFACT_BYTES (256 KiB in the fuzz). */
const fileBytes = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 2, arbitrary: fc.constantFrom('', bytes(4096), bytes(70_000), bytes(300_000)) },
  { weight: 1, arbitrary: fc.constantFrom(bytes(256 * 1024), bytes(256 * 1024 + 1)) },
);

/** An upload's query (with its `?`, or none): name, filename, append. */
const uploadQuery = fc
  .record(
    {
      name: fc.constantFrom('result', 'out', 'é'),
      filename: fc.constantFrom('out.bin', 'a b.png', '../x'),
      append: fc.constantFrom('true', 'false'),
    },
    { requiredKeys: [] },
  )
  .map((q) => {
    const all = Object.entries(q).map(([k, v]) => `${k}=${encodeURIComponent(v)}`);
    return all.length === 0 ? '' : `?${all.join('&')}`;
  });
/** A query an upload refuses: out of bounds, unknown keys, bad escapes, a key twice. */
const badUploadQuery = fc
  .tuple(
    query({
      name: fc.constantFrom('result', '', 'x'.repeat(256)),
      filename: fc.constantFrom('out.bin', '', 'x'.repeat(256)),
      append: fc.constantFrom('true', 'false', 'yes', '', 'TRUE'),
    }),
    fc.constantFrom('', '&append=true&append=false', '&name[a]=1', '&x=1'),
  )
  .map(([q, raw]) => (q === '' ? raw.replace('&', '?') : `${q}${raw}`));

/** An upload's Content-Type (`undefined`: none), and ones that are no media type. */
const mediaType = fc.constantFrom(
  undefined,
  'application/octet-stream',
  'text/plain; charset=utf-8',
  'image/png',
  'application/json',
  'text/plain;;;',
);
const badMediaType = fc.constantFrom('nonsense', '', `x/${'y'.repeat(300)}`, ';;', 'text/', 'a/b c');

/**
 * The remote workers' face, /v1/workers (docs/workers.md): claims, every job write and upload,
 * the OpenAPI document and paths that are nothing, as the worker mostly, with wrong lease tokens
 * (none, empty, long, non-ASCII, real-looking) at tasks that exist (not held) and ones that do not.
 * `held`: aimed at {@link HELD_TASK} with {@link HELD_LEASE} mostly, job writes and uploads only.
 */
export function workers(k: Known, held = false): fc.Arbitrary<FuzzRequest> {
  const c = fc.constant;
  const p = (...parts: fc.Arbitrary<string>[]) => fc.tuple(...parts).map((xs) => xs.join(''));
  const task = held
    ? fc.oneof(
        { weight: 16, arbitrary: c(HELD_TASK) },
        { weight: 1, arbitrary: c(HELD_TASK_UPPER) },
        { weight: 1, arbitrary: fc.constantFrom(`${HELD_TASK}%20`, `${HELD_TASK}%00`, `%20${HELD_TASK}`) },
        { weight: 2, arbitrary: segmentOf(k.taskIds) },
      )
    : segmentOf(k.taskIds);
  const as = held
    ? fc.constantFrom<FuzzRequest['as']>(...Array<FuzzRequest['as']>(12).fill('robot'), 'alice', 'nobody')
    : asWorker;
  const lease = leaseHeader(held);
  type Draft = {
    method: string;
    path: string;
    body?: string;
    lease?: string;
    type?: string;
    hangUpAfter?: number;
  };
  const draft = (d: fc.Arbitrary<Draft>) =>
    fc.record({ d, headers: oddHeaders, usual: held ? fc.nat(4).map((n) => n > 0) : mostly, sender: as }).map(
      ({ d, headers, usual, sender }): FuzzRequest => ({
        method: d.method,
        path: d.path,
        as: sender,
        headers: {
          ...(usual ? (d.type === undefined ? {} : { 'Content-Type': d.type }) : headers),
          ...(d.lease === undefined ? {} : { 'Lease-Token': d.lease }),
        },
        body: d.body,
        ...(d.hangUpAfter === undefined ? {} : { hangUpAfter: d.hangUpAfter }),
      }),
    );
  const write = (action: string, body?: Parameters<typeof writeBodies>[0]) =>
    draft(
      fc.record({
        method: method('POST'),
        path: p(c('/v1/workers/jobs/'), task, c(`/${action}`)),
        body: body ? bodyText(writeBodies(body, held ? 4 : 1)).map((b): string | undefined => b) : strayBody,
        lease,
        type: c('application/json'),
      }),
    );
  const upload = draft(
    fc.record({
      method: method('PUT'),
      path: p(
        c('/v1/workers/jobs/'),
        task,
        c('/artifacts/'),
        fc.oneof(
          { weight: 8, arbitrary: artifactId.map(encodeURIComponent) },
          { weight: 1, arbitrary: badArtifactId.map(encodeURIComponent) },
          { weight: 1, arbitrary: segmentOf(['out']) },
        ),
        fc.oneof(
          { weight: held ? 4 : 1, arbitrary: uploadQuery },
          { weight: held ? 1 : 2, arbitrary: badUploadQuery },
        ),
      ),
      body: fileBytes,
      lease,
      type: fc.oneof({ weight: held ? 6 : 2, arbitrary: mediaType }, { weight: 1, arbitrary: badMediaType }),
    }),
  );
  const writes = fc.oneof(
    { weight: 3, arbitrary: write('heartbeat') },
    { weight: 3, arbitrary: write('progress', 'progress') },
    { weight: 2, arbitrary: write('status', 'status') },
    { weight: 3, arbitrary: write('artifacts', 'artifacts') },
    { weight: 1, arbitrary: write('ask', 'ask') },
    { weight: 1, arbitrary: write('complete', 'complete') },
    { weight: 1, arbitrary: write('fail', 'fail') },
    { weight: 1, arbitrary: write('release') },
    { weight: 2, arbitrary: upload },
    // The worker dies mid-request: it hangs up after some of the file, or of a body.
    {
      weight: 1,
      arbitrary: fc
        .tuple(upload, fc.constantFrom(bytes(70_000), bytes(300_000)), fc.constantFrom(0, 1, 4096, 65_536))
        .map(([r, body, hangUpAfter]) => ({ ...r, body, hangUpAfter })),
    },
    { weight: 1, arbitrary: write('progress', 'progress').map((r) => ({ ...r, hangUpAfter: 1 })) },
  );
  if (held) {
    // Meanwhile its owner reads it, downloads what is being written, cancels it; the worker reads it.
    const meanwhile = fc
      .record({
        route: fc.constantFrom<[string, string]>(
          ['GET', `/v1/jobs/${HELD_TASK}`],
          ['GET', `/v1/jobs/${HELD_TASK}/result`],
          ['GET', `/v1/jobs/${HELD_TASK}/artifacts/out`],
          ['GET', `/v1/jobs/${HELD_TASK}/artifacts/log`],
          ['DELETE', `/v1/jobs/${HELD_TASK}`],
          ['POST', `/v1/jobs/${HELD_TASK}:cancel`],
        ),
        sender: fc.constantFrom<FuzzRequest['as']>('alice', 'alice', 'alice', 'robot'),
      })
      .map(({ route: [m, path], sender }): FuzzRequest => ({ method: m, path, as: sender, headers: {} }));
    return fc.oneof({ weight: 12, arbitrary: writes }, { weight: 1, arbitrary: meanwhile });
  }
  const claims = draft(
    fc.record({
      method: method('POST'),
      path: fc.constantFrom(
        '/v1/workers/claims',
        '/v1/workers/claims',
        '/v1/workers/claims/',
        '/v1/workers/claims?waitMs=30000',
      ),
      body: claimBody,
      type: c('application/json'),
    }),
  );
  const openapi = draft(
    fc.record({
      method: method('GET'),
      path: fc.constantFrom('/v1/workers/openapi.json', '/v1/workers/openapi.json?x=1'),
      body: strayBody,
    }),
  );
  const nothing = draft(
    fc.record({
      method: fc.constantFrom('GET', 'POST', 'DELETE', 'PATCH'),
      path: fc.oneof(
        fc.constantFrom(
          '/v1/workers',
          '/v1/workers/',
          '/v1/workers/nope',
          '/v1/workers/jobs',
          '/v1/workers/jobs/',
          '/v1/workers/claims/x',
          '/v1/workers/openapi.yaml',
          '/v1/workers/%ZZ',
          '/v1/workers/..%2Fjobs',
          '/v1/workers/jobs//heartbeat',
          '/v1/workers/jobs/%ZZ/artifacts/%ZZ',
        ),
        p(c('/v1/workers/jobs/'), task),
        p(
          c('/v1/workers/jobs/'),
          task,
          fc.constantFrom(
            '/nope',
            '/HEARTBEAT',
            '/artifacts/a/b',
            '/cancel',
            '/',
            '/complete/x',
            ':complete',
          ),
        ),
      ),
      body: fc.oneof(
        strayBody,
        bodyText(hostile).map((b): string | undefined => b),
      ),
      lease,
      type: c('application/json'),
    }),
  );
  return fc.oneof(
    { weight: 8, arbitrary: writes },
    { weight: 3, arbitrary: claims },
    { weight: 1, arbitrary: openapi },
    { weight: 1, arbitrary: nothing },
  );
}

function routeRequests(routes: Route[]): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...routes).chain(([m, path, body]) =>
    fc
      .record({
        method: method(m),
        path,
        body: body ? bodyText(body).map((b) => b as string | undefined) : fc.constant(undefined),
        headers: oddHeaders,
        usual: mostly,
        as: who,
        stray: strayBody,
      })
      .map((r) => ({
        method: r.method,
        path: r.path,
        as: r.as,
        headers: r.usual ? { 'Content-Type': 'application/json' } : r.headers,
        body: r.body ?? r.stray,
      })),
  );
}

/** Requests over every face, A2A's JSON-RPC (the protocol's main face) most often. */
export const fuzzRequest = (k: Known): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(
    { weight: 4, arbitrary: jsonRpc(k) },
    { weight: 2, arbitrary: mcp(k) },
    { weight: 3, arbitrary: rest(k) },
    { weight: 2, arbitrary: jobs(k) },
    { weight: 2, arbitrary: workers(k) },
    { weight: 1, arbitrary: inbox(k) },
    { weight: 1, arbitrary: other(k) },
  );
