import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readBody } from '../../src/faces/http/body.js';

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
});
