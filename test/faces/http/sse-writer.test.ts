import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'vitest';
import { SseWriter } from '../../../src/faces/http/sse.js';
import { waitFor } from '../../helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A real server whose every request is an SSE stream with a 30 ms keep-alive; `closed` counts onClose calls. */
async function serve(): Promise<{ url: string; closed: () => number }> {
  let closed = 0;
  const server = createServer((_req, res) => {
    new SseWriter(res, 30, { onClose: () => closed++ }).comment('open');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, closed: () => closed };
}

/** Opens a stream and collects what arrives; `close` ends it from the client's side. */
function open(url: string): { text: () => string; close: () => void } {
  let text = '';
  const req = request(url, (res) => {
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      text += d;
    });
  });
  req.on('error', () => {});
  req.end();
  return { text: () => text, close: () => req.destroy() };
}

const keepAlives = (text: string) => text.split(': keep-alive\n\n').length - 1;

describe('SseWriter keep-alives (one timer shared by the streams of a period)', () => {
  it('every stream gets its comments; one that leaves stops getting them and the others go on', async () => {
    const { url, closed } = await serve();
    const [a, b] = [open(url), open(url)];
    await waitFor(
      () => (keepAlives(a.text()) >= 2 && keepAlives(b.text()) >= 2 ? true : undefined),
      () => `keep-alives on both streams: ${JSON.stringify([a.text(), b.text()])}`,
    );
    a.close();
    await waitFor(
      () => (closed() === 1 ? true : undefined),
      () => 'the server to hear the first client leave',
    );
    const seen = keepAlives(b.text());
    await waitFor(
      () => (keepAlives(b.text()) >= seen + 2 ? true : undefined),
      () => 'more keep-alives on the stream still open',
    );
    b.close();
    await waitFor(
      () => (closed() === 2 ? true : undefined),
      () => 'the server to hear the second client leave',
    );
  });

  it('a stream opened after all the others closed gets keep-alives again (the timer restarts)', async () => {
    const { url, closed } = await serve();
    const first = open(url);
    await waitFor(
      () => (keepAlives(first.text()) >= 1 ? true : undefined),
      () => 'a keep-alive',
    );
    first.close();
    await waitFor(
      () => (closed() === 1 ? true : undefined),
      () => 'the server to hear the client leave',
    );
    const second = open(url);
    await waitFor(
      () => (keepAlives(second.text()) >= 2 ? true : undefined),
      () => 'keep-alives on the new stream',
    );
    second.close();
  });
});
