import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import { type AddressInfo, getDefaultAutoSelectFamily, setDefaultAutoSelectFamily } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllowList } from '../../src/push/address-policy.js';
import { type LookupFunction, postWebhook, retryAfterMs } from '../../src/push/webhook-client.js';

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  port: number;
  received: Received[];
}

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A real HTTP receiver on 127.0.0.1 that records every request before `respond` answers it. */
async function receiver(respond: RequestListener): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({
      method: req.method,
      url: req.url,
      headers: req.headers,
      body: Buffer.concat(chunks).toString(),
    });
    respond(req, res);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, received };
}

function answer(status: number, headers: Record<string, string> = {}): RequestListener {
  return (_req, res) => {
    res.writeHead(status, headers).end('receiver body');
  };
}

const loopbackOpen = parseAllowList('127.0.0.0/8');
const closed = parseAllowList(undefined);

function post(
  url: string,
  policy = loopbackOpen,
  extra: { timeoutMs?: number; lookup?: LookupFunction } = {},
) {
  return postWebhook({
    url: new URL(url),
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer t0k3n',
      'x-a2a-notification-token': 'abc',
    },
    body: JSON.stringify({ id: 'task-1', status: { state: 'completed' }, note: 'héllo' }),
    timeoutMs: extra.timeoutMs ?? 5_000,
    policy,
    ...(extra.lookup ? { lookup: extra.lookup } : {}),
  });
}

/** Resolves rebind.test to loopback, as a rebinding attacker's DNS server would. */
const rebindLookup: LookupFunction = (hostname, _options, callback) => {
  if (hostname === 'rebind.test') callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
};

describe('postWebhook against real receivers', () => {
  it('2xx is ok and the receiver gets the exact body and headers', async () => {
    const r = await receiver(answer(204));
    const result = await post(`http://127.0.0.1:${r.port}/hooks/a2a?x=1#frag`);
    expect(result).toEqual({ ok: true, status: 204 });
    expect(r.received).toHaveLength(1);
    const got = r.received[0];
    const body = JSON.stringify({ id: 'task-1', status: { state: 'completed' }, note: 'héllo' });
    expect(got?.method).toBe('POST');
    expect(got?.url).toBe('/hooks/a2a?x=1');
    expect(got?.body).toBe(body);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers.authorization).toBe('Bearer t0k3n');
    expect(got?.headers['x-a2a-notification-token']).toBe('abc');
    expect(got?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
  });

  it('500 is retryable, 429 is retryable, 400 is not', async () => {
    const r500 = await receiver(answer(500));
    expect(await post(`http://127.0.0.1:${r500.port}/`)).toMatchObject({
      ok: false,
      status: 500,
      retryable: true,
    });
    const r429 = await receiver(answer(429));
    expect(await post(`http://127.0.0.1:${r429.port}/`)).toMatchObject({
      ok: false,
      status: 429,
      retryable: true,
    });
    const r400 = await receiver(answer(400));
    expect(await post(`http://127.0.0.1:${r400.port}/`)).toMatchObject({
      ok: false,
      status: 400,
      retryable: false,
    });
  });

  it("reads a retryable answer's Retry-After (seconds or an HTTP date), and ignores it elsewhere", async () => {
    const busy = await receiver(answer(503, { 'Retry-After': '7' }));
    expect(await post(`http://127.0.0.1:${busy.port}/`)).toMatchObject({
      retryable: true,
      retryAfterMs: 7000,
    });
    const refused = await receiver(answer(400, { 'Retry-After': '7' }));
    expect(await post(`http://127.0.0.1:${refused.port}/`)).not.toHaveProperty('retryAfterMs');
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:30 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(
      30_000,
    );
    expect(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 08:00:00 GMT'))).toBe(
      0,
    );
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(undefined)).toBeUndefined();
  });

  it('a redirect is refused and its Location is never requested', async () => {
    const target = await receiver(answer(200));
    const bouncer = await receiver(answer(302, { location: `http://127.0.0.1:${target.port}/internal` }));
    const result = await post(`http://127.0.0.1:${bouncer.port}/`);
    expect(result).toMatchObject({ ok: false, status: 302, retryable: false });
    expect(result.ok ? '' : result.error).toMatch(/^redirect refused/);
    expect(bouncer.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  it('a receiver slower than the timeout gives a retryable timeout, promptly', async () => {
    const r = await receiver(() => {}); // reads the request, never answers
    const started = Date.now();
    const result = await post(`http://127.0.0.1:${r.port}/`, loopbackOpen, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, retryable: true });
    expect(result.ok ? '' : result.error).toContain('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('an endless response body is cut off once the status is known', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(200 * 1024)); // past the 64 KiB cap, and never ended
    });
    expect(await post(`http://127.0.0.1:${r.port}/`, loopbackOpen, { timeoutMs: 20_000 })).toEqual({
      ok: true,
      status: 200,
    });
  });

  it('a closed port is a retryable network error', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    server.close();
    await once(server, 'close');
    const result = await post(`http://127.0.0.1:${port}/`);
    expect(result).toMatchObject({ ok: false, retryable: true });
    expect(result).not.toHaveProperty('unresolved');
    expect(result.ok ? '' : result.error).toContain('ECONNREFUSED');
  });
});

describe('postWebhook address checks', () => {
  it('a literal loopback URL is refused before connecting under the default policy', async () => {
    const r = await receiver(answer(200));
    const result = await post(`http://127.0.0.1:${r.port}/`, closed);
    expect(result).toMatchObject({ ok: false, retryable: false });
    expect(result.ok ? '' : result.error).toContain('127.0.0.1 is a loopback address');
    expect(r.received).toHaveLength(0);
  });

  it('DNS rebinding: a name resolving to loopback is refused at connect time', async () => {
    const r = await receiver(answer(200));
    const result = await post(`http://rebind.test:${r.port}/`, closed, { lookup: rebindLookup });
    expect(result).toMatchObject({ ok: false, retryable: false });
    expect(result.ok ? '' : result.error).toContain('127.0.0.1 is a loopback address');
    // The operator reads how to open it on purpose (the next test shows that setting delivering).
    expect(result.ok ? '' : result.error).toContain('PUSH_ALLOW=rebind.test');
    expect(r.received).toHaveLength(0);
  });

  it('DNS rebinding is also caught when Node asks for a single address (autoSelectFamily off)', async () => {
    const r = await receiver(answer(200));
    const before = getDefaultAutoSelectFamily();
    setDefaultAutoSelectFamily(false);
    try {
      const refused = await post(`http://rebind.test:${r.port}/`, closed, { lookup: rebindLookup });
      expect(refused.ok ? '' : refused.error).toContain('loopback');
      const delivered = await post(`http://rebind.test:${r.port}/`, parseAllowList('rebind.test'), {
        lookup: rebindLookup,
      });
      expect(delivered).toEqual({ ok: true, status: 200 });
    } finally {
      setDefaultAutoSelectFamily(before);
    }
    expect(r.received).toHaveLength(1);
  });

  it('an allow-listed host name is delivered whatever it resolves to', async () => {
    const r = await receiver(answer(200));
    const result = await post(`http://rebind.test:${r.port}/`, parseAllowList('rebind.test'), {
      lookup: rebindLookup,
    });
    expect(result).toEqual({ ok: true, status: 200 });
    expect(r.received).toHaveLength(1);
    expect(r.received[0]?.headers.host).toBe(`rebind.test:${r.port}`);
  });

  it('a name that does not resolve is a retryable error, marked unresolved (retried a bounded number of times)', async () => {
    const result = await post('http://nowhere.test/', closed, { lookup: rebindLookup });
    expect(result).toMatchObject({ ok: false, retryable: true, unresolved: true });
    expect(result.ok ? '' : result.error).toContain('ENOTFOUND');
  });

  it('a name under .invalid (RFC 6761: never resolves) is unresolved with the system resolver too', async () => {
    const result = await post('http://hook.invalid/', parseAllowList('hook.invalid', false));
    expect(result).toMatchObject({ ok: false, retryable: true, unresolved: true });
  });
});
