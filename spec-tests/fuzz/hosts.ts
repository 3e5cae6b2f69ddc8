import fc from 'fast-check';
import { type FuzzResponse, faceOf, violation } from './checks.js';
import type { Wire } from './client.js';
import { type FuzzRequest, fuzzRequest, type Known } from './requests.js';

/**
 * DNS rebinding (docs/SECURITY.md): on a server that serves anonymous callers, a request whose Host
 * (for gRPC, its :authority) or browser Origin names another site is refused with 403 and words
 * naming the setting that would let it; the server's own names are served. Here are values for both
 * headers, each made with what the rule makes of it: `own` (served), `foreign` (refused) or `either`
 * (syntax no browser sends and the docs do not settle, such as a trailing dot, text after an IPv6
 * bracket, userinfo or a port out of range: only the suite's invariants hold for those).
 */
export type Verdict = 'own' | 'foreign' | 'either';

/** A Host or Origin value and its verdict. */
export interface Named {
  value: string;
  is: Verdict;
  /**
   * An own Origin that MCP's stricter rule serves too (docs/mcp.md): the server's own origin, the
   * names localhost, 127.0.0.1 and [::1], and MCP_ALLOWED_ORIGINS. Other own origins (a
   * `*.localhost`, another 127.x address, an ALLOWED_HOSTS name) are refused by /mcp alone.
   */
  mcp?: boolean;
}

/** How the anonymous fuzz server is launched: the names it answers to besides loopback and IPs. */
export interface Names {
  /** The port it listens on. */
  port: number;
  /** ALLOWED_HOSTS. */
  allowedHost: string;
  /** PUBLIC_URL's host (PUBLIC_URL is `http://<publicHost>:<port>`). */
  publicHost: string;
  /** MCP_ALLOWED_ORIGINS. */
  mcpOrigin: string;
}

export const NAMES: Omit<Names, 'port'> = {
  allowedHost: 'agent.internal',
  publicHost: 'taskhandle.test',
  mcpOrigin: 'http://inspector.test:6274',
};

const own = (value: string): Named => ({ value, is: 'own' });
const foreign = (value: string): Named => ({ value, is: 'foreign' });
const either = (value: string): Named => ({ value, is: 'either' });

/**
 * A domain of another site: random, never a loopback name nor one the server lists (nor one ending
 * `.js` or `.ts`: the refusal quotes it, and with a port it reads as a source position to the checks).
 */
const otherDomain = (n: Omit<Names, 'port'>) =>
  fc
    .domain()
    .filter(
      (d) =>
        !/(^|\.)localhost$/i.test(d) &&
        !/\.[cm]?[jt]s$/i.test(d) &&
        d.toLowerCase() !== n.allowedHost &&
        d.toLowerCase() !== n.publicHost,
    );

/** A Host header's value (for gRPC, the :authority). */
export function hostValue(n: Names): fc.Arbitrary<Named> {
  const ports = fc.constantFrom(`:${n.port}`, `:${n.port}`, '', ':1', ':80', ':443', ':65535');
  const ownNames = fc.constantFrom(
    'localhost',
    'LOCALHOST',
    'LocalHost',
    'app.localhost',
    'a.b.LOCALHOST',
    '127.0.0.1',
    '127.8.9.10',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[::ffff:127.0.0.1]',
    '10.1.2.3',
    '192.168.0.1',
    '8.8.8.8',
    '0.0.0.0',
    '[2001:db8::1]',
    '[FE80::1]',
    n.allowedHost,
    n.allowedHost.toUpperCase(),
    n.publicHost,
  );
  const foreignNames = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        'evil.example',
        'EVIL.EXAMPLE',
        'evil.example.',
        // Look-alikes: a loopback name or address, or a listed one, inside another site's name.
        'localhost.evil.example',
        'LOCALHOST.evil.example.',
        'localhost-evil.example',
        'evillocalhost',
        'localhostx',
        'a.localhost.evil.example',
        '127.0.0.1.nip.io',
        '127.0.0.1.evil.example',
        '0x7f000001.evil.example',
        `${n.allowedHost}.evil.example`,
        `x${n.allowedHost}`,
        n.allowedHost.split('.').slice(1).join('.') || 'internal',
        `${n.publicHost}.evil.example`,
        'xn--lcalhost-9wa.example',
        'localh\u00f6st',
        'local host',
        'localhost,evil.example',
        'evil.example,localhost',
      ),
    },
    { weight: 2, arbitrary: otherDomain(n) },
  );
  // Syntax no browser sends: what the rule makes of it is not settled by the docs.
  const odd = fc.constantFrom(
    'localhost.',
    '127.0.0.1.',
    `${n.allowedHost}.`,
    'app.localhost.',
    '::1',
    '[::1]evil.example',
    '[::1].evil.example',
    '[::1',
    '[]',
    `localhost:${n.port}@evil.example`,
    'evil.example@localhost',
    ' localhost ',
    'localhost:',
    'localhost:abc',
    `localhost:${n.port}:${n.port}`,
    '127.0.0.1:99999',
    '0x7f000001',
    '2130706433',
    '127.1',
    '',
  );
  // Random printable and latin1 bytes (Node's client refuses control bytes: see the raw requests).
  const garbage = fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
    ),
    maxLength: 40,
  });
  return fc.oneof(
    { weight: 6, arbitrary: fc.tuple(ownNames, ports).map(([h, p]) => own(`${h}${p}`)) },
    { weight: 5, arbitrary: fc.tuple(foreignNames, ports).map(([h, p]) => foreign(`${h}${p}`)) },
    { weight: 2, arbitrary: odd.map(either) },
    { weight: 1, arbitrary: garbage.map(either) },
  );
}

/** A browser's Origin header. */
export function originValue(n: Names): fc.Arbitrary<Named> {
  const scheme = fc.constantFrom('http', 'http', 'https', 'HTTP');
  const ports = fc.constantFrom(`:${n.port}`, '', ':1', ':3000', ':6274');
  /** Own names, and whether MCP's rule serves them (URL parsing lower-cases and compresses). */
  const ownNames = fc.constantFrom<[string, boolean]>(
    ['localhost', true],
    ['LOCALHOST', true],
    ['127.0.0.1', true],
    ['[::1]', true],
    ['[0:0:0:0:0:0:0:1]', true],
    ['app.localhost', false],
    ['127.8.9.10', false],
    [n.allowedHost, false],
    [n.publicHost, false],
  );
  const ownOrigin = fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .tuple(scheme, ownNames, ports)
        .map(([s, [h, mcp], p]): Named => ({ value: `${s}://${h}${p}`, is: 'own', mcp })),
    },
    // Its own origin (PUBLIC_URL) and the one MCP_ALLOWED_ORIGINS lists: served everywhere.
    {
      weight: 1,
      arbitrary: fc.constantFrom<Named>(
        { value: `http://${n.publicHost}:${n.port}`, is: 'own', mcp: true },
        { value: n.mcpOrigin, is: 'own', mcp: true },
      ),
    },
  );
  const foreignOrigin = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        'null',
        `http://evil.example:${n.port}`,
        'https://evil.example',
        `http://evil.example.:${n.port}`,
        `http://localhost.evil.example:${n.port}`,
        'http://127.0.0.1.nip.io',
        'http://evillocalhost',
        `http://${n.allowedHost}.evil.example`,
        `https://${n.publicHost}.evil.example`,
        'https://localhost@evil.example',
        // MCP_ALLOWED_ORIGINS lists an origin, not a host: another port of it is another site.
        n.mcpOrigin.replace(/\d+$/, (p) => String(Number(p) + 1)),
        'file://',
        'chrome-extension://abcdefghijklmnop',
        'about:blank',
        'garbage',
        'localhost',
      ),
    },
    { weight: 2, arbitrary: fc.tuple(scheme, otherDomain(n)).map(([s, d]) => `${s}://${d}`) },
    // Without a colon nothing parses as an origin, so nothing can name the server.
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map((s) => s.replaceAll(':', '').trim() || 'x') },
  );
  const odd = fc.constantFrom(
    'http://localhost.',
    'http://127.0.0.1.',
    'http://evil.example@localhost',
    `http://localhost:${n.port}/`,
    `http://localhost:${n.port}/path?q`,
    'http://localhost:99999',
    'http://0x7f000001',
    'http://10.0.0.1',
    'http://[::2]',
    'http://a, http://localhost',
  );
  return fc.oneof(
    { weight: 6, arbitrary: ownOrigin },
    { weight: 5, arbitrary: foreignOrigin.map(foreign) },
    { weight: 1, arbitrary: odd.map(either) },
  );
}

/** Headers a browser adds that the rule does not read: they change nothing. */
const bystanders = fc.record(
  {
    Referer: fc.constantFrom('http://evil.example/page', 'http://localhost/'),
    'Sec-Fetch-Site': fc.constantFrom('cross-site', 'same-origin', 'none'),
    'X-Forwarded-Host': fc.constantFrom('evil.example', 'localhost'),
    Forwarded: fc.constantFrom('host=evil.example', 'for=127.0.0.1;host=localhost'),
  },
  { requiredKeys: [] },
);

/** What the fuzz knows of the anonymous server: a completed task, its artifact. */
export interface AnonymousKnown {
  taskId: string;
  artifactId: string;
}

/**
 * A request to a face as a browser sends it, well-formed, to a route that admits it (so the host
 * rule decides it), and the face's name.
 */
interface FaceCall {
  face: string;
  request: FuzzRequest;
}

/** The faces a rebinding page could drive, with real ids: each succeeds when its host is the server's. */
export function faceCalls(k: AnonymousKnown): fc.Arbitrary<FaceCall> {
  const id = k.taskId;
  const json = { 'Content-Type': 'application/json' };
  const v1 = { ...json, 'A2A-Version': '1.0' };
  const rpc = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const exportMessage = (messageId: string) => ({
    messageId,
    role: 'ROLE_USER',
    parts: [{ data: { skill: 'export', input: { rows: 1 } } }],
  });
  const call = (face: string, method: string, path: string, headers: Record<string, string>, body?: string) =>
    ({ face, request: { method, path, headers, body, as: 'local' } }) satisfies FaceCall;
  // The id of an MCP stream's event, as a client that lost the stream sends it back (docs/mcp.md).
  const mcpEventId = `${Buffer.from(
    JSON.stringify({ id: 1, method: 'tools/call', taskId: id, statusNotifications: false }),
  ).toString('base64url')}.0`;
  const mcp = { ...json, Accept: 'application/json, text/event-stream' };
  return fc.oneof(
    fc.constantFrom(
      call('A2A JSON-RPC', 'POST', '/', v1, rpc('GetTask', { id })),
      call('A2A JSON-RPC', 'POST', '/', v1, rpc('ListTasks', {})),
      call('A2A JSON-RPC v0.3', 'POST', '/', json, rpc('tasks/get', { id })),
      call('A2A REST', 'GET', `/rest/tasks/${id}`, { 'A2A-Version': '1.0' }),
      call('A2A REST', 'GET', '/rest/tasks', { 'A2A-Version': '1.0' }),
      call('A2A REST v0.3', 'GET', `/rest/v1/tasks/${id}`, {}),
      call('/v1/jobs', 'GET', '/v1/jobs', {}),
      call('/v1/jobs', 'GET', `/v1/jobs/${id}`, {}),
      call('/v1/jobs', 'GET', `/v1/jobs/${id}/result`, {}),
      call('artifact download', 'GET', `/v1/jobs/${id}/artifacts/${encodeURIComponent(k.artifactId)}`, {}),
      call('SSE', 'GET', `/v1/jobs/${id}/events`, { Accept: 'text/event-stream' }),
      call('MCP', 'POST', '/mcp', mcp, rpc('tools/list', {})),
      call('MCP', 'POST', '/mcp', mcp, rpc('tasks/get', { taskId: id })),
      call('MCP stream', 'GET', '/mcp', { Accept: 'text/event-stream', 'Last-Event-ID': mcpEventId }),
      call('inbox', 'GET', '/inbox/api/waiting', {}),
      call('inbox SSE', 'GET', '/inbox/api/events', {}),
      call('console', 'GET', '/console/api/tasks', {}),
      call('console', 'GET', `/console/api/tasks/${id}`, {}),
      call('console SSE', 'GET', '/console/api/events', {}),
      call(
        'workers',
        'POST',
        '/v1/workers/claims',
        json,
        JSON.stringify({ skills: ['render'], max: 1, waitMs: 0 }),
      ),
    ),
    // Writes: each makes a task when served (an export of one row, done at once).
    fc.tuple(fc.constantFrom('jsonrpc', 'jsonrpc-stream', 'jobs'), fc.uuid()).map(([w, messageId]) =>
      w === 'jobs'
        ? call('/v1/jobs', 'POST', '/v1/jobs', json, JSON.stringify({ skill: 'export', input: { rows: 1 } }))
        : w === 'jsonrpc'
          ? call(
              'A2A JSON-RPC',
              'POST',
              '/',
              v1,
              rpc('SendMessage', {
                message: exportMessage(messageId),
                configuration: { returnImmediately: true },
              }),
            )
          : call(
              'A2A JSON-RPC',
              'POST',
              '/',
              v1,
              rpc('SendStreamingMessage', { message: exportMessage(messageId) }),
            ),
    ),
  );
}

/** One generated request to the anonymous server, and what its Host and Origin make of it. */
export interface HostCase {
  request: FuzzRequest;
  /** The face of a well-formed call (its success is checked); none for a mutated request of the fuzz. */
  face?: string;
  host?: Named;
  origin?: Named;
  /** Sent as raw bytes (two Hosts, none, HTTP/1.0, control bytes, an absolute-form target). */
  wire?: Wire;
  /** The Host holds a byte no HTTP parser takes: Node answers 400 before any face. */
  unparsable?: boolean;
}

/** A header line with a control byte in it: the request is not HTTP. */
const controlByte = fc.constantFrom('\u0000', '\u0001', '\u001b', '\u007f');

/**
 * Requests to every face of the anonymous server with generated Host and Origin headers: the well
 * formed calls of {@link faceCalls} mostly, the fuzz's mutated requests too, and now and then raw
 * bytes Node's client will not send.
 */
export function hostCase(n: Names, k: AnonymousKnown, fuzz: Known): fc.Arbitrary<HostCase> {
  const host = hostValue(n);
  const origin = fc.option(originValue(n), { freq: 2, nil: undefined });
  const headersOf = (r: FuzzRequest, h: Named, o: Named | undefined, extra: Record<string, string>) => ({
    ...r,
    as: 'local' as const,
    headers: { ...r.headers, ...extra, Host: h.value, ...(o ? { Origin: o.value } : {}) },
  });
  const clean = fc.record({ call: faceCalls(k), host, origin, extra: bystanders }).map(
    ({ call, host, origin, extra }): HostCase => ({
      request: headersOf(call.request, host, origin, extra),
      face: call.face,
      host,
      origin,
    }),
  );
  const mutated = fc
    .record({ r: fuzzRequest(fuzz), host, origin })
    .map(({ r, host, origin }): HostCase => ({ request: headersOf(r, host, origin, {}), host, origin }));
  const ownHost = host.filter((h) => h.is === 'own');
  const foreignHost = host.filter((h) => h.is === 'foreign');
  // An absolute-form target is routed by Express (never the JSON-RPC endpoint, which matches `/`):
  // asked of the faces that answer in problem documents, so that its path names its face.
  const problemFace = faceCalls(k).filter((c) => /^\/(v1|inbox|console)\//.test(c.request.path));
  const raw = fc
    .record({
      call: faceCalls(k),
      problemCall: problemFace,
      own: ownHost,
      other: foreignHost,
      origin,
      byte: controlByte,
      ownFirst: fc.boolean(),
      kind: fc.constantFrom(
        'no-host',
        'http/1.0',
        'two-hosts',
        'two-origins',
        'control-byte',
        'absolute-form',
      ),
    })
    .map(({ call, problemCall, own, other, origin, byte, ownFirst, kind }): HostCase => {
      const r = { ...call.request, headers: { ...call.request.headers } };
      const origins = origin ? [origin.value] : [];
      switch (kind) {
        // HTTP/1.1 requires a Host (RFC 9112 3.2): a request without one is refused 400.
        case 'no-host':
          return { request: r, wire: { version: '1.1', hosts: [], origins }, unparsable: true };
        // HTTP/1.0 needs none, and a request without one passes (docs/SECURITY.md).
        case 'http/1.0':
          return { request: r, face: call.face, origin, wire: { version: '1.0', hosts: [], origins } };
        // No browser sends these: only the invariants hold.
        case 'two-hosts':
          return {
            request: r,
            host: either(''),
            origin,
            wire: {
              version: '1.1',
              hosts: ownFirst ? [own.value, other.value] : [other.value, own.value],
              origins,
            },
          };
        case 'two-origins':
          return {
            request: r,
            host: own,
            origin: either(''),
            wire: {
              version: '1.1',
              hosts: [own.value],
              origins: [`http://evil.example:${n.port}`, 'http://localhost'],
            },
          };
        // RFC 9112 3.2.2 says the target's authority wins over Host; no browser sends one to a server.
        case 'absolute-form': {
          const target = `http://evil.example:${n.port}${problemCall.request.path}`;
          return {
            request: { ...problemCall.request, path: target },
            host: either(''),
            origin,
            wire: { version: '1.1', hosts: [own.value], origins },
          };
        }
        case 'control-byte':
          return {
            request: r,
            wire: { version: '1.1', hosts: [`local${byte}host:${n.port}`], origins },
            unparsable: true,
          };
      }
      throw new Error(`no such raw request: ${kind}`);
    });
  return fc.oneof(
    { weight: 10, arbitrary: clean },
    { weight: 6, arbitrary: mutated },
    { weight: 1, arbitrary: raw },
  );
}

/** What the rule makes of a case as a whole: refused when either header is foreign to its face. */
export function verdictOf(c: HostCase): Verdict {
  const mcp = /^\/mcp(?=[/?]|$)/.test(c.request.path);
  const origin: Verdict | undefined =
    c.origin && (mcp && c.origin.is === 'own' && !c.origin.mcp ? 'foreign' : c.origin.is);
  const all = [c.host?.is ?? 'own', origin ?? 'own'];
  if (all.includes('foreign')) return 'foreign';
  return all.includes('either') ? 'either' : 'own';
}

/**
 * Public on any Host (docs/SECURITY.md): the agent card, `GET /`, /healthz, the JWKS and the
 * pages with their static files; and the OpenAPI documents, which are static files too (OPTIONS
 * of them is answered with their methods).
 */
export function isPublic(r: FuzzRequest): boolean {
  if (!['GET', 'HEAD', 'OPTIONS'].includes(r.method)) return false;
  const path = r.path.split('?')[0] ?? '';
  return /^\/(\.well-known\/(agent-card|jwks|agent-card-jwks)\.json|healthz|(inbox|console)(\/([\w.-]+\.(js|css|html))?)?|v1\/openapi\.json|v1\/workers\/openapi\.json)?\/?$/i.test(
    path,
  );
}

/** The words of a host refusal: they name the setting that would let the request in. */
const HOST_REFUSAL = /ALLOWED_HOSTS|MCP_ALLOWED_ORIGINS/;

/** A success of its face: not an error status, and for JSON-RPC a result, not an error object. */
function succeeded(r: FuzzRequest, res: FuzzResponse): boolean {
  if (res.status >= 300 || res.status === 0) return false;
  const face = faceOf(r);
  if ((face === 'jsonrpc' || face === 'mcp') && res.contentType.startsWith('application/json')) {
    try {
      return 'result' in (JSON.parse(res.text) as object);
    } catch {
      return false;
    }
  }
  return true;
}

/** Why the answer to a case breaks the rule or the suite's invariants; undefined when it keeps them. */
export function hostViolation(c: HostCase, res: FuzzResponse): string | undefined {
  const r = c.request;
  // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400, in the server's words.
  if (c.wire?.hosts.length === 0 && c.wire.version === '1.1') {
    if (res.status !== 400 || !res.contentType.startsWith('application/problem+json'))
      return `an HTTP/1.1 request without Host answered ${res.status} ${res.contentType}, not a 400 problem`;
    return /Host header/.test(res.text) ? undefined : 'the 400 for a missing Host does not name the header';
  }
  if (c.unparsable) {
    if (res.status !== 400) return `a request no parser takes answered ${res.status}, not 400`;
    if (!res.contentType.startsWith('application/problem+json')) return 'a 400 that is not problem+json';
    return undefined;
  }
  const base = violation(r, res);
  if (base) return base;
  const verdict = verdictOf(c);
  const text = res.text;
  if (verdict === 'foreign') {
    if (isPublic(r)) return undefined;
    if (succeeded(r, res)) return `a foreign Host or Origin was served (${res.status})`;
    if (c.face === undefined) return undefined;
    // A well-formed call is refused by the host rule itself: 403, naming the setting.
    if (res.status !== 403) return `a foreign Host or Origin answered ${res.status}, not 403`;
    if (r.method !== 'HEAD' && !HOST_REFUSAL.test(text))
      return 'a host refusal that does not name ALLOWED_HOSTS (or MCP_ALLOWED_ORIGINS)';
    return undefined;
  }
  if (verdict === 'own') {
    if (HOST_REFUSAL.test(text)) return 'an own Host and Origin were refused for their host';
    if (c.face === undefined) return undefined;
    // The console's own rule (docs/console.md): the local user only at a loopback name.
    if (c.face.startsWith('console') && res.status === 403) return undefined;
    if (!succeeded(r, res)) return `a well-formed call with an own Host and Origin answered ${res.status}`;
  }
  return undefined;
}
