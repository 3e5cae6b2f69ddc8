import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyRefused, readBody } from '../../../src/faces/http/body.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('readBody', () => {
  // A stream (SubscribeToTask) keeps its request for hours: the read must not leave its iterator's
  // listeners on it (the default `for await` left close, error, end, finish and readable).
  it('leaves no listeners on the request once the body is read', async () => {
    const seen = new Promise<{ text: string; listeners: number }>((resolve) => {
      const server = createServer(async (req, res) => {
        const text = await readBody(req, 1000);
        const listeners = req.eventNames().reduce((n, e) => n + req.listenerCount(e), 0);
        resolve({ text, listeners });
        res.end();
      });
      servers.push(server);
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        const req = request({ port, host: '127.0.0.1', method: 'POST' }, (res) => res.resume());
        req.end('{"id":"t-1"}');
      });
    });
    expect(await seen).toEqual({ text: '{"id":"t-1"}', listeners: 0 });
  });

  /** Serves one request with readBody and reports how the read ended. */
  function readOne(send: (port: number) => void): Promise<string | Error> {
    return new Promise((resolve) => {
      const server = createServer((req, res) => {
        readBody(req, 1000).then(resolve, resolve);
        res.on('error', () => {});
        req.on('error', () => {});
        setTimeout(() => res.end(), 50);
      });
      servers.push(server);
      server.listen(0, '127.0.0.1', () => send((server.address() as AddressInfo).port));
    });
  }

  it('refuses a chunked body once it passes the limit, without Content-Length to go by', async () => {
    const outcome = await readOne((port) => {
      const req = request({ port, host: '127.0.0.1', method: 'POST' }, (res) => res.resume());
      req.on('error', () => {});
      req.write('x'.repeat(600));
      setTimeout(() => req.end('y'.repeat(600)), 20);
    });
    expect(outcome).toBeInstanceOf(BodyRefused);
    expect((outcome as BodyRefused).problem.kind).toBe('too-large');
  });

  it('fails, rather than waiting forever, when the caller goes away mid-body', async () => {
    const outcome = await readOne((port) => {
      const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'Content-Length': '500' } });
      req.on('error', () => {});
      req.write('x'.repeat(100));
      setTimeout(() => req.destroy(), 20);
    });
    // Node says "aborted" (the request's error), or the request closes first: either way a refusal
    // (the caller's doing, not logged as a failure of ours), never a wait.
    expect(outcome).toBeInstanceOf(BodyRefused);
    expect((outcome as BodyRefused).problem.kind).toBe('gone');
  });
});
