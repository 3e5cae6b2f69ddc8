import { Agent, request } from 'node:http';
import { createParser } from 'eventsource-parser';
import { RPC_HEADERS, subscribeBody } from './rpc.js';

/**
 * One SubscribeToTask stream read with node:http and eventsource-parser: far lighter per stream
 * than fetch, so that one process can hold ten thousand of them without becoming the bottleneck.
 */
export interface Subscriber {
  taskId: string;
  /** performance.now() when the terminal status arrived; undefined until then. */
  transitionAt: number | undefined;
  /** Resolves when the terminal status arrives or the stream ends. */
  done: Promise<void>;
  close(): void;
}

const TERMINAL = /"TASK_STATE_(CANCELED|COMPLETED|FAILED|REJECTED)"/;

// One socket per stream, and no pooling limit: every subscriber holds its connection open.
const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });

/** Opens a stream; resolves once its first event (the task as it stands) has arrived. */
export function subscribe(url: string, taskId: string, timeoutMs = 60_000): Promise<Subscriber> {
  return new Promise((resolveOpen, rejectOpen) => {
    let opened = false;
    let finish: () => void = () => {};
    const done = new Promise<void>((r) => {
      finish = r;
    });
    const sub: Subscriber = { taskId, transitionAt: undefined, done, close: () => req.destroy() };
    const timer = setTimeout(() => fail(new Error(`no first event within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      if (!opened) rejectOpen(err);
      req.destroy();
      finish();
    };
    const parser = createParser({
      onEvent: (event) => {
        if (!opened) {
          opened = true;
          clearTimeout(timer);
          if (event.data.includes('"error"'))
            return fail(new Error(`subscribe failed: ${event.data.slice(0, 300)}`));
          resolveOpen(sub);
          return;
        }
        if (sub.transitionAt === undefined && TERMINAL.test(event.data)) {
          sub.transitionAt = performance.now();
          finish();
        }
      },
    });
    const req = request(url, { method: 'POST', agent, headers: RPC_HEADERS }, (res) => {
      if (res.statusCode !== 200) {
        fail(new Error(`subscribe answered HTTP ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => parser.feed(chunk));
      res.on('end', () => fail(new Error('stream ended')));
      res.on('error', (err) => fail(err));
    });
    req.on('error', (err) => fail(err));
    req.end(subscribeBody(taskId));
  });
}
