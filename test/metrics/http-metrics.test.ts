import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Authenticator } from '../../src/auth/authenticator.js';
import { RateLimiter } from '../../src/auth/rate-limiter.js';
import { admission } from '../../src/faces/http/admission.js';
import { SseWriter } from '../../src/faces/http/sse.js';
import { HttpMetrics } from '../../src/metrics/http-metrics.js';
import { waitFor } from '../helpers.js';
import { sampleOf } from './read.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A real HTTP server whose requests HttpMetrics counts: each path answers a status, /stream is SSE. */
async function serve(): Promise<{ url: string; registry: Registry; metrics: HttpMetrics }> {
  const registry = new Registry();
  const refusals = new Counter({
    name: 'refusals_total',
    help: 'h',
    labelNames: ['reason'],
    registers: [registry],
  });
  const metrics = new HttpMetrics(registry, refusals, {
    a2aRest: '/rest',
    jobs: '/v1/',
    workers: '/v1/workers/',
    inbox: '/inbox',
    mcp: '/mcp',
  });
  const server = createServer((req, res) => {
    metrics.track(req, res);
    if (req.url === '/inbox/stream') {
      new SseWriter(res, 60_000).comment('open');
      return;
    }
    const status = req.url?.startsWith('/mcp') ? 500 : req.url?.startsWith('/v1/') ? 202 : 200;
    res.writeHead(status).end();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, registry, metrics };
}

describe('HttpMetrics', () => {
  it('counts requests by face (from the path), method and status, with their latency', async () => {
    const { url, registry } = await serve();
    await fetch(`${url}/v1/jobs`, { method: 'POST' });
    await fetch(`${url}/v1/jobs/0123-4567`);
    await fetch(`${url}/v1/workers/claims`, { method: 'POST' });
    await fetch(`${url}/mcp`, { method: 'POST' });
    await fetch(`${url}/`, { method: 'POST' });
    await fetch(`${url}/?x=1`);
    await fetch(`${url}/rest/tasks/abc`);
    await fetch(`${url}/nowhere/abc`, { method: 'DELETE' });
    const value = (name: string, labels: Record<string, string>) => sampleOf(registry, name, labels);
    await waitFor(
      async () =>
        (await value('taskhandle_http_requests_total', { face: 'other' })) === 1 ? true : undefined,
      () => 'the last request to be counted',
    );
    const requests = (face: string, method: string, status: string) =>
      value('taskhandle_http_requests_total', { face, method, status });
    expect(await requests('jobs', 'POST', '202')).toBe(1);
    expect(await requests('jobs', 'GET', '202')).toBe(1);
    expect(await requests('workers', 'POST', '202')).toBe(1);
    expect(await requests('mcp', 'POST', '500')).toBe(1);
    expect(await requests('a2a-jsonrpc', 'POST', '200')).toBe(1);
    expect(await requests('home', 'GET', '200')).toBe(1);
    expect(await requests('a2a-rest', 'GET', '200')).toBe(1);
    expect(await requests('other', 'DELETE', '200')).toBe(1);
    expect(
      await value('taskhandle_http_request_duration_seconds_count', { face: 'jobs', method: 'GET' }),
    ).toBe(1);
    // Labels are faces and methods, never a path or an id.
    const text = await registry.metrics();
    for (const part of ['0123-4567', '/rest/tasks', 'nowhere', 'x=1']) expect(text).not.toContain(part);
  });

  it('counts an SSE stream as open until it closes, and keeps its length out of the latency', async () => {
    const { url, registry } = await serve();
    const open = () => sampleOf(registry, 'taskhandle_open_streams', { kind: 'sse' });
    const before = await open();
    const controller = new AbortController();
    const res = await fetch(`${url}/inbox/stream`, { signal: controller.signal });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(await open()).toBe(before + 1);
    controller.abort();
    await waitFor(
      async () => ((await open()) === before ? true : undefined),
      () => 'the stream to be counted closed',
    );
    await waitFor(
      async () =>
        (await sampleOf(registry, 'taskhandle_http_requests_total', { face: 'inbox' })) === 1
          ? true
          : undefined,
      () => 'the stream to be counted',
    );
    expect(
      await sampleOf(registry, 'taskhandle_http_request_duration_seconds_count', { face: 'inbox' }),
    ).toBe(0);
  });

  it('hears admission refuse a caller over its rate', async () => {
    const registry = new Registry();
    const refusals = new Counter({
      name: 'refusals_total',
      help: 'h',
      labelNames: ['reason'],
      registers: [registry],
    });
    const metrics = new HttpMetrics(registry, refusals, {
      a2aRest: '/rest',
      jobs: '/v1/',
      workers: '/v1/workers/',
      inbox: '/inbox',
      mcp: '/mcp',
    });
    const admit = admission(new Authenticator({}), new RateLimiter(1, 1, () => 0), metrics.refused);
    const caller = { headers: {}, socket: { remoteAddress: '127.0.0.1' } };
    expect((await admit(caller)).ok).toBe(true);
    expect((await admit(caller)).ok).toBe(false);
    expect(await sampleOf(registry, 'refusals_total', { reason: 'rate-limited' })).toBe(1);
  });
});
