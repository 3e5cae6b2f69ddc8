import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLE } from './a2a.js';
import { type Agent, freePort, launch, serveExpectingExit } from './harness.js';

describe('settings', () => {
  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_URL', 'postgres://db/tasks'],
    ['DATABASE_SCHEMA', 'Bad-Name'],
    ['DATABASE_POOL_MAX', '0'],
    ['LEASE_MS', '5'],
    ['PUBLIC_URL', 'ftp://example.com'],
    ['MAX_BODY_BYTES', 'lots'],
    ['SQLITE_SYNCHRONOUS', 'off'],
    ['DEFAULT_SKILL', 'teleport'],
  ])('%s=%s stops the start with a message naming it', async (name, value) => {
    const { code, stderr } = await serveExpectingExit({ [name]: value });
    expect(code).toBe(78); // EX_CONFIG
    expect(stderr).toContain(`${name}=`);
    expect(stderr).toContain(value);
  });

  it('a PostgreSQL that cannot be reached stops the start, naming it without its password', async () => {
    const { code, stderr } = await serveExpectingExit({
      DATABASE_URL: 'postgres://taskhandle:s3cret@127.0.0.1:1/tasks',
    });
    expect(code).toBe(78);
    expect(stderr).toContain('DATABASE_URL=postgres://taskhandle:***@127.0.0.1:1/tasks');
    expect(stderr).toContain('ECONNREFUSED');
    expect(stderr).not.toContain('s3cret');
  });

  it('a port already taken stops the start with a message naming HOST and PORT', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = String((taken.address() as { port: number }).port);
    try {
      const { code, stderr } = await serveExpectingExit({ HOST: '127.0.0.1', PORT: port });
      expect(code).toBe(78);
      expect(stderr).toContain(`PORT=${port}`);
      expect(stderr).toContain('EADDRINUSE');
    } finally {
      await new Promise((r) => taken.close(r));
    }
  });
});

describe('health and the agent card', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch();
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('GET /healthz answers ok', async () => {
    const res = await fetch(`${agent.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('logs structured JSON lines (pino)', async () => {
    await fetch(`${agent.url}/healthz`);
    expect(agent.logs.length).toBeGreaterThan(0);
    for (const line of agent.logs) {
      expect(line).not.toHaveProperty('raw');
      expect(typeof line.level).toBe('number');
      expect(typeof line.time).toBe('number');
      expect(typeof line.msg).toBe('string');
    }
    expect(agent.logs.find((l) => l.msg === 'taskhandle listening')).toMatchObject({
      url: agent.url,
      skills: ['export', 'sleep', 'approval', 'batch'].map((id) => ({ id, from: 'built-in' })),
    });
  });

  it('serves a v1.0 card that v0.3 clients can read too', async () => {
    const res = await fetch(`${agent.url}/.well-known/agent-card.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await res.text();
    expect(text).not.toContain('$case');
    const card = JSON.parse(text);
    expect(card.name).toBe('taskhandle');
    expect(card.supportedInterfaces).toEqual([
      { url: `${agent.url}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${agent.url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: `${agent.url}/`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: `${agent.url}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
    expect(card.capabilities.streaming).toBe(true);
    expect(card.capabilities.extensions.map((e: { uri: string }) => e.uri)).toContain(HANDLE);
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(['export', 'sleep', 'approval', 'batch']);
    for (const skill of card.skills) {
      expect(skill.description.length).toBeGreaterThan(0);
      expect(Array.isArray(skill.tags)).toBe(true);
    }
    // What v0.3 clients read.
    expect(card.url).toBe(`${agent.url}/`);
    expect(card.preferredTransport).toBe('JSONRPC');
    expect(card.protocolVersion).toBe('0.3.0');
    expect(card.additionalInterfaces).toEqual([
      { url: `${agent.url}/`, transport: 'JSONRPC' },
      { url: `${agent.url}/rest`, transport: 'HTTP+JSON' },
    ]);
  });

  it('has an ETag and Cache-Control, and answers 304 to If-None-Match', async () => {
    const res = await fetch(`${agent.url}/.well-known/agent-card.json`);
    const etag = res.headers.get('etag');
    expect(etag).toMatch(/^(W\/)?".+"$/);
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    const again = await fetch(`${agent.url}/.well-known/agent-card.json`, {
      headers: { 'If-None-Match': etag ?? '' },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const stale = await fetch(`${agent.url}/.well-known/agent-card.json`, {
      headers: { 'If-None-Match': '"something-else"' },
    });
    expect(stale.status).toBe(200);
  });
});

describe('PUBLIC_URL', () => {
  let agent: Agent;
  let local: string;
  const publicUrl = 'https://agents.example.com/taskhandle';
  beforeAll(async () => {
    const port = await freePort();
    local = `http://127.0.0.1:${port}`;
    agent = await launch({ env: { PORT: String(port), PUBLIC_URL: `${publicUrl}/` } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('puts the public URL (without a trailing slash) in the card', async () => {
    expect(agent.url).toBe(publicUrl);
    const card = (await (await fetch(`${local}/.well-known/agent-card.json`)).json()) as {
      url: string;
      supportedInterfaces: { url: string }[];
    };
    expect(card.url).toBe(`${publicUrl}/`);
    expect(card.supportedInterfaces.map((i) => i.url)).toEqual([
      `${publicUrl}/`,
      `${publicUrl}/rest`,
      `${publicUrl}/`,
      `${publicUrl}/rest`,
    ]);
  });
});
