import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskState } from '../../../src/engine/task.js';
import { type PageChanges, type PageStreamOptions, pageStream } from '../../../src/faces/browser/changes.js';
import { latch, waitFor } from '../../helpers.js';

type Listener = (taskId: string, state: TaskState) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/**
 * A real server whose every request is a page stream over `changes`, watching a status feed the
 * test tells (`tell`); `watching` counts the subscriptions held, `signals` the pages' signals.
 */
async function serve(changes: PageChanges, o: Partial<PageStreamOptions> = {}) {
  const listeners = new Set<Listener>();
  const signals: AbortSignal[] = [];
  const shutdown = new AbortController();
  const server = createServer((_req, res) => {
    try {
      pageStream(
        res,
        {
          onStatus: (listener) => {
            listeners.add(listener);
            return () => listeners.delete(listener);
          },
          keepAliveMs: 60_000,
          shutdown: shutdown.signal,
          ...o,
        },
        (_nudge, signal) => {
          signals.push(signal);
          return changes;
        },
      );
    } catch {
      res.writeHead(429).end();
    }
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const tell = (taskId: string, state: TaskState) => {
    for (const l of listeners) l(taskId, state);
  };
  return { url, tell, watching: () => listeners.size, signals, shutdown };
}

/** Reads a stream as it comes; `ended` once the server ends it; `close` leaves from the client's side. */
async function read(url: string) {
  const leave = new AbortController();
  const res = await fetch(url, { signal: leave.signal });
  let text = '';
  let ended = false;
  void (async () => {
    try {
      for await (const chunk of res.body ?? []) text += Buffer.from(chunk).toString('utf8');
      ended = true;
    } catch {
      // The client left.
    }
  })();
  const until = (what: string, probe: () => boolean) =>
    waitFor(
      () => (probe() ? true : undefined),
      () => `${what}: ${JSON.stringify(text)}`,
    );
  return { res, text: () => text, ended: () => ended, until, close: () => leave.abort() };
}

/** Changes that tell the ids heard since the last look, in one `changed` event; `looks` counts the looks. */
function heardIds(gate?: (look: number) => Promise<void> | undefined) {
  let heard: string[] = [];
  let looks = 0;
  const changes: PageChanges = {
    heard: (taskId) => {
      heard.push(taskId);
    },
    async look() {
      looks += 1;
      const ids = heard;
      heard = [];
      await gate?.(looks);
      return ids.length > 0 ? [['changed', { ids }]] : [];
    },
  };
  return { changes, looks: () => looks };
}

describe('the browser pages’ change stream (browser/changes.ts)', () => {
  it('says connected after its first look, then tells each burst of changes once, numbered', async () => {
    const { changes } = heardIds();
    const agent = await serve(changes);
    const stream = await read(agent.url);
    expect(stream.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.res.headers.get('cache-control')).toBe('no-store');
    await stream.until('connected', () => stream.text().includes(': connected\n\n'));
    agent.tell('a', 'working');
    agent.tell('b', 'working');
    await stream.until('the burst', () => stream.text().includes('event: changed'));
    expect(stream.text()).toContain('id: 1\nevent: changed\ndata: {"ids":["a","b"]}\n\n');
    agent.tell('c', 'completed');
    await stream.until('the next burst', () => stream.text().includes('"ids":["c"]'));
    expect(stream.text()).toContain('id: 2\nevent: changed\ndata: {"ids":["c"]}\n\n');
    stream.close();
  });

  it('a burst that ends while the last look is still out is looked at once it is done (it was dropped until the next keep-alive)', async () => {
    const held = latch();
    const { changes, looks } = heardIds((look) => (look === 2 ? held.promise : undefined));
    const agent = await serve(changes);
    const stream = await read(agent.url);
    await stream.until('connected', () => stream.text().includes(': connected'));
    agent.tell('a', 'working');
    await waitFor(
      () => (looks() === 2 ? true : undefined),
      () => 'the look at the first burst',
    );
    // Heard while that look is out: its burst ends before the look does.
    agent.tell('b', 'completed');
    await sleep(300);
    held.resolve();
    await stream.until('both bursts', () => stream.text().includes('"ids":["b"]'));
    expect(stream.text()).toContain('id: 1\nevent: changed\ndata: {"ids":["a"]}');
    expect(stream.text()).toContain('id: 2\nevent: changed\ndata: {"ids":["b"]}');
    stream.close();
  });

  it('looks at each keep-alive too when asked (the inbox: changes made on other instances)', async () => {
    const { changes, looks } = heardIds();
    const agent = await serve(changes, { keepAliveMs: 20, lookAtKeepAlive: true });
    const stream = await read(agent.url);
    await waitFor(
      () => (looks() >= 3 ? true : undefined),
      () => `looks at keep-alives (${looks()} so far)`,
    );
    stream.close();
  });

  it('gives back its watch and aborts the page’s signal when the client goes', async () => {
    const agent = await serve(heardIds().changes);
    const stream = await read(agent.url);
    await stream.until('connected', () => stream.text().includes(': connected'));
    expect(agent.watching()).toBe(1);
    stream.close();
    await waitFor(
      () => (agent.watching() === 0 && agent.signals[0]?.aborted ? true : undefined),
      () => 'the watch given back',
    );
  });

  it('ends at shutdown, giving back its watch; one opened after the shutdown ends at once', async () => {
    const agent = await serve(heardIds().changes);
    const stream = await read(agent.url);
    await stream.until('connected', () => stream.text().includes(': connected'));
    agent.shutdown.abort();
    await stream.until('the end', stream.ended);
    expect(agent.watching()).toBe(0);
    const late = await read(agent.url);
    await late.until('the end', late.ended);
    expect(late.text()).not.toContain('connected');
    expect(agent.watching()).toBe(0);
  });

  it('a watch refused (too many streams) throws before anything is sent, so the route can answer', async () => {
    const agent = await serve(heardIds().changes, {
      onStatus: () => {
        throw new Error('too many streams');
      },
    });
    const res = await fetch(agent.url);
    expect(res.status).toBe(429);
  });
});
