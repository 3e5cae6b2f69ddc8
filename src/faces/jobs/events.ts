import type { Response } from 'express';
import type { Engine } from '../../engine/engine.js';
import type { StreamItem } from '../../engine/streams.js';
import type { StreamHandle, StreamSink } from '../../engine/subscription.js';
import { type OpenSubscriptions, openUntil } from '../http/open-subscriptions.js';
import { SseWriter, untilDrained } from '../http/sse.js';
import { jobDocument, mountOf } from './document.js';

export interface JobEventsOptions {
  engine: Engine;
  owner: string;
  id: string;
  /** Last-Event-ID: replay what followed that event (no snapshot first). */
  afterSeq?: number;
  keepAliveMs: number;
  shutdown: AbortSignal;
}

/**
 * The job's events over SSE: each event's id is its log sequence number and its data the job
 * document after it (`{seq, event, job}`). Unlike the A2A stream, it follows a job through
 * input_required and ends only at a terminal status (or shutdown, or the client leaving).
 * Resolves once the stream is open (it then lives on its own); rejects with a refusal (a task not
 * found or not the caller's, MAX_STREAMS), which is a problem document, not an SSE stream that
 * ends at once.
 */
export function jobEvents(res: Response, o: JobEventsOptions): Promise<void> {
  return new Promise((opened, refused) => {
    new JobStream(res, o, opened, refused);
  });
}

/** One job's stream, the sink of its engine subscription. */
class JobStream implements StreamSink {
  readonly #res: Response;
  readonly #o: JobEventsOptions;
  readonly #open: OpenSubscriptions;
  readonly #handle: StreamHandle;
  #opened: (() => void) | undefined;
  #refused: ((err: unknown) => void) | undefined;
  #sse: SseWriter | undefined;

  constructor(res: Response, o: JobEventsOptions, opened: () => void, refused: (err: unknown) => void) {
    this.#res = res;
    this.#o = o;
    this.#opened = opened;
    this.#refused = refused;
    this.#open = openUntil(o.shutdown);
    this.#handle = o.engine.subscribe(o.owner, o.id, { afterSeq: o.afterSeq, until: 'terminal' }, this);
    this.#open.add(this);
  }

  open(): void {
    this.#sse = new SseWriter(this.#res, this.#o.keepAliveMs, { onClose: () => this.close() });
    this.#opened?.();
    this.#opened = undefined;
    this.#refused = undefined;
  }

  item(item: StreamItem): Promise<unknown> {
    if (item.kind === 'task') {
      const job = jobDocument(item.view.record, mountOf(this.#res));
      return this.#send({ seq: item.seq, event: 'snapshot', job }, item.seq);
    }
    const { seq, event } = item.entry;
    // The record alone: a replay of a long log must not fold the whole log once per event.
    return this.#o.engine
      .record(this.#o.owner, this.#o.id)
      .then((record) =>
        this.#send({ seq, event: event.kind, job: jobDocument(record, mountOf(this.#res)) }, seq),
      );
  }

  /** The job's last event was sent, or it vanished (expired) or the store closed mid-stream: it just ends. */
  end(err?: unknown): void {
    this.#open.delete(this);
    if (this.#sse) this.#sse.end();
    else this.#refused?.(err);
  }

  /** The client left, or the server stops. */
  close(): void {
    this.#open.delete(this);
    this.#handle.close();
    // An unopened stream opens to end at once.
    if (!this.#sse) this.open();
    this.#sse?.end();
  }

  #send(data: unknown, seq: number): Promise<void> {
    this.#sse?.send(data, seq);
    // A client that does not read holds the stream here, not in the server's memory.
    return untilDrained(this.#res);
  }
}
