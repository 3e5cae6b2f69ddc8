import { request } from 'node:http';
import { SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, launch } from './harness.js';

/** Every top-level field of AgentCard in a2a.proto v1.0: the v1.0 card holds nothing else. */
const V1_FIELDS = new Set([
  'name',
  'description',
  'supportedInterfaces',
  'provider',
  'version',
  'documentationUrl',
  'capabilities',
  'securitySchemes',
  'securityRequirements',
  'defaultInputModes',
  'defaultOutputModes',
  'skills',
  'signatures',
  'iconUrl',
]);
// biome-ignore lint/suspicious/noExplicitAny: cards are inspected freely in tests
type Card = Record<string, any>;

const V03_ONLY = ['url', 'preferredTransport', 'protocolVersion', 'additionalInterfaces'];

describe('the agent card for each protocol version', () => {
  let agent: Agent;
  const cardUrl = () => `${agent.url}/.well-known/agent-card.json`;
  beforeAll(async () => {
    agent = await launch();
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('A2A-Version: 1.0 (header or request parameter) gets the v1.0 card, with no v0.3 field', async () => {
    for (const res of [
      await fetch(cardUrl(), { headers: { 'A2A-Version': '1.0' } }),
      await fetch(`${cardUrl()}?A2A-Version=1.0`),
    ]) {
      expect(res.status).toBe(200);
      expect(res.headers.get('vary')).toMatch(/A2A-Version/i);
      const card = (await res.json()) as Card;
      expect(Object.keys(card).filter((k) => !V1_FIELDS.has(k))).toEqual([]);
      expect(card.supportedInterfaces[0]).toEqual({
        url: `${agent.url}/`,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      });
      expect(card.capabilities).not.toHaveProperty('supportsAuthenticatedExtendedCard');
    }
  });

  it('a request naming no version (spec: a v0.3 client) or 0.3 gets the v0.3 fields as well', async () => {
    const plain = (await (await fetch(cardUrl())).json()) as Card;
    const named = (await (await fetch(cardUrl(), { headers: { 'A2A-Version': '0.3' } })).json()) as Card;
    expect(named).toEqual(plain);
    for (const field of V03_ONLY) expect(plain).toHaveProperty(field);
    expect(plain.supportsAuthenticatedExtendedCard).toBe(false);
    expect(plain.supportedInterfaces).toHaveLength(4);
  });

  it('each card has its own ETag, a Last-Modified, and answers 304 to either validator', async () => {
    const v1 = await fetch(cardUrl(), { headers: { 'A2A-Version': '1.0' } });
    const v03 = await fetch(cardUrl());
    const etag = v1.headers.get('etag') ?? '';
    expect(etag).not.toBe(v03.headers.get('etag'));
    const lastModified = v1.headers.get('last-modified') ?? '';
    expect(Date.parse(lastModified)).toBeLessThanOrEqual(Date.now());
    const conditional = (headers: Record<string, string>) =>
      fetch(cardUrl(), { headers: { 'A2A-Version': '1.0', ...headers } });
    expect((await conditional({ 'If-None-Match': etag })).status).toBe(304);
    expect((await conditional({ 'If-Modified-Since': lastModified })).status).toBe(304);
    const before = new Date(Date.parse(lastModified) - 1000).toUTCString();
    expect((await conditional({ 'If-Modified-Since': before })).status).toBe(200);
    // If-None-Match decides when both are sent (RFC 9110 13.2.2): the v0.3 card's ETag is not this one.
    const other = { 'If-None-Match': v03.headers.get('etag') ?? '', 'If-Modified-Since': lastModified };
    expect((await conditional(other)).status).toBe(200);
  });

  it('/.well-known/agent.json (before v0.3) serves the same card, with the same headers', async () => {
    const oldUrl = `${agent.url}/.well-known/agent.json`;
    for (const headers of [{}, { 'A2A-Version': '1.0' }] as Record<string, string>[]) {
      const [now, before] = await Promise.all([fetch(cardUrl(), { headers }), fetch(oldUrl, { headers })]);
      // Served, not redirected: httpx (a2a-python) follows no redirect by default.
      expect(before.status).toBe(200);
      expect(before.redirected).toBe(false);
      for (const h of ['content-type', 'etag', 'cache-control', 'vary', 'access-control-allow-origin'])
        expect(before.headers.get(h), h).toBe(now.headers.get(h));
      expect(await before.json()).toEqual(await now.json());
    }
    const head = await fetch(oldUrl, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const etag = head.headers.get('etag') ?? '';
    expect((await fetch(oldUrl, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    // What the old clients read of it: the v0.3 fields (url, the JSON-RPC endpoint), as ever.
    const card = (await (await fetch(oldUrl)).json()) as Card;
    expect(card.url).toBe(`${agent.url}/`);
    expect(card.name).toBe('taskhandle');
    // The Host and Origin rules (DNS rebinding) and CORS are the card route's, whatever they are.
    const port = new URL(agent.url).port;
    const foreign: Record<string, string>[] = [
      { Host: `evil.example:${port}` },
      { Host: `127.0.0.1:${port}`, Origin: 'http://evil.example' },
    ];
    for (const headers of foreign) {
      const [now, before] = await Promise.all(
        ['/.well-known/agent-card.json', '/.well-known/agent.json'].map((path) => get(agent, path, headers)),
      );
      expect(before).toEqual(now);
    }
  });

  it("the SDK's v1.0 client reads the card it gets (A2A-Version: 1.0) and sends", async () => {
    const client = await new ClientFactory().createFromUrl(agent.url);
    expect(client.protocolVersion).toBe('1.0');
    const reply = await client.sendMessage(sleepRequest({ returnImmediately: true }));
    expect((reply as Task).id).toBeTruthy();
  });

  it('a v0.3 client reads the card it gets without A2A-Version as a v0.3 card, and sends', async () => {
    // What a v0.3 peer reads: url, preferredTransport, additionalInterfaces (the SDK's v0.3 reading).
    const legacy = parseLegacyAgentCard(await (await fetch(cardUrl())).json());
    expect(legacy.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion])).toEqual([
      ['JSONRPC', '0.3.0'],
      ['JSONRPC', '0.3'],
      ['HTTP+JSON', '0.3'],
    ]);
    const factory = new ClientFactory({
      transports: [
        new JsonRpcTransportFactory({ legacyCompat: { enabled: true } }),
        new RestTransportFactory({ legacyCompat: { enabled: true } }),
      ],
    });
    const client = await factory.createFromAgentCard(legacy);
    expect(client.protocolVersion).toMatch(/^0\.3/);
    const reply = await client.sendMessage(sleepRequest({ returnImmediately: true }));
    expect((reply as Task).id).toBeTruthy();
  });
});

/** A send of the sleep skill in v1.0 JSON, decoded by the SDK's own codec. */
const sleepRequest = (configuration: Record<string, unknown>) =>
  SendMessageRequest.fromJSON({
    message: {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER',
      parts: [{ data: { skill: 'sleep', input: { seconds: 1 } } }],
    },
    configuration,
  });

/** A GET with the headers a browser would send (fetch would not send our Host): status, CORS header, body. */
function get(
  agent: Agent,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; cors: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, agent.url), { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          cors: res.headers['access-control-allow-origin'] as string | undefined,
          body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}
