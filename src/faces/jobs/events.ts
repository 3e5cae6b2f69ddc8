import type { Response } from 'express';
import type { Engine } from '../../engine/engine.js';
import type { StreamItem } from '../../engine/streams.js';
import { SseWriter } from '../http/sse.js';
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
 */
export async function jobEvents(res: Response, o: JobEventsOptions): Promise<void> {
  const gone = new AbortController();
  res.once('close', () => gone.abort());
  const signal = AbortSignal.any([gone.signal, o.shutdown]);
  const items = o.engine.stream(o.owner, o.id, { afterSeq: o.afterSeq, until: 'terminal', signal });
  // The first item before the stream opens: a refusal (a task not found or not the caller's,
  // MAX_STREAMS) is a problem document, not an SSE stream that ends at once.
  const first = await items.next();
  const sse = new SseWriter(res, o.keepAliveMs);
  const send = async (item: StreamItem) => {
    if (item.kind === 'task') {
      sse.send(
        { seq: item.seq, event: 'snapshot', job: jobDocument(item.view.record, mountOf(res)) },
        item.seq,
      );
    } else {
      // The record alone: a replay of a long log must not fold the whole log once per event.
      const record = await o.engine.record(o.owner, o.id);
      sse.send(
        { seq: item.entry.seq, event: item.entry.event.kind, job: jobDocument(record, mountOf(res)) },
        item.entry.seq,
      );
    }
    // A client that does not read holds the stream here, not in the server's memory.
    await sse.drained();
  };
  try {
    if (first.done) return;
    await send(first.value);
    for await (const item of items) await send(item);
  } catch {
    // The task vanished (expired) or the store closed mid-stream: the stream just ends.
  } finally {
    await items.return(undefined);
    sse.end();
  }
}
