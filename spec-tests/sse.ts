import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** One Server-Sent Event with its `data:` parsed as JSON. */
export interface SseEvent {
  id?: string;
  event?: string;
  // biome-ignore lint/suspicious/noExplicitAny: events are inspected freely in tests
  data: any;
}

/** An open SSE response read with eventsource-parser, one event at a time. */
export interface SseStream {
  status: number;
  headers: Headers;
  /** Comment lines (without the leading ':') seen so far: the keep-alives. */
  comments: string[];
  /** The raw text received so far. */
  raw(): string;
  /** The next event, or undefined once the server has closed the stream. Rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseEvent | undefined>;
  /** Every remaining event until the server closes the stream. */
  rest(timeoutMs?: number): Promise<SseEvent[]>;
  /** Drops the connection, as a client that goes away. */
  close(): void;
}

/**
 * POSTs (or GETs) and reads the answer as an event stream. A non-SSE answer (an error as JSON)
 * still resolves: check `status` and `headers` before reading events.
 */
export async function openSse(url: string, init: RequestInit = {}): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, { ...init, signal: controller.signal });
  const queue: SseEvent[] = [];
  const comments: string[] = [];
  let raw = '';
  let ended = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const ring = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const parser = createParser({
    onEvent: (e: EventSourceMessage) => {
      queue.push({ id: e.id, event: e.event, data: JSON.parse(e.data) });
      ring();
    },
    onComment: (c) => {
      comments.push(c);
      ring();
    },
  });
  void (async () => {
    try {
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        raw += text;
        parser.feed(text);
      }
    } catch (err) {
      if (!controller.signal.aborted) failure = err;
    } finally {
      ended = true;
      ring();
    }
  })();

  const stream: SseStream = {
    status: res.status,
    headers: res.headers,
    comments,
    raw: () => raw,
    async next(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const event = queue.shift();
        if (event) return event;
        if (failure) throw failure;
        if (ended) return undefined;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms; received so far:\n${raw}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, left).unref();
        });
      }
    },
    async rest(timeoutMs = 15_000) {
      const all: SseEvent[] = [];
      for (let e = await stream.next(timeoutMs); e; e = await stream.next(timeoutMs)) all.push(e);
      return all;
    },
    close() {
      controller.abort();
    },
  };
  return stream;
}

/** Waits until the stream has received at least `count` comments (keep-alives). */
export async function waitForComments(s: SseStream, count: number, timeoutMs = 10_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  while (s.comments.length < count) {
    if (Date.now() > deadline) throw new Error(`only ${s.comments.length} SSE comments in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return s.comments;
}
