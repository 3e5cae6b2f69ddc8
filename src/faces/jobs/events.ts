import type { Response } from 'express';
import type { Engine } from '../../engine/engine.js';
import type { StreamItem } from '../../engine/streams.js';
import { TaskStream } from '../http/held-stream.js';
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
  return new JobStream(res, o).follow();
}

/** One job's stream, the sink of its engine subscription; it just ends after the last event. */
class JobStream extends TaskStream<Response> {
  readonly #o: JobEventsOptions;

  constructor(res: Response, o: JobEventsOptions) {
    super(res, o.keepAliveMs, o.shutdown);
    this.#o = o;
  }

  follow(): Promise<void> {
    const { engine, owner, id, afterSeq } = this.#o;
    return this.start(engine, owner, id, { afterSeq, until: 'terminal' });
  }

  item(item: StreamItem): undefined | Promise<unknown> {
    const mount = mountOf(this.res);
    if (item.kind === 'task') {
      return this.send(
        { seq: item.seq, event: 'snapshot', job: jobDocument(item.view.record, mount) },
        item.seq,
      );
    }
    const { seq, event } = item.entry;
    // The record alone: a replay of a long log must not fold the whole log once per event.
    return this.#o.engine
      .record(this.#o.owner, this.#o.id)
      .then((record) => this.send({ seq, event: event.kind, job: jobDocument(record, mount) }, seq));
  }
}
