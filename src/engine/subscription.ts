import type { EngineContext } from './context.js';
import type { HubListener, LoggedEvent } from './events.js';
import { activeView, get, record } from './reads.js';
import { type StreamItem, type SubscribeOptions, settled } from './streams.js';
import { isTerminal, type TaskState } from './task.js';

/** Where a subscription delivers a task's stream: a face writing its frames. */
export interface StreamSink {
  /** The task was found and this caller may stream it: once, before any item and before a clean end. */
  open?(): void;
  /**
   * One item, in log order: the task as it stands first (unless resumed), then each event. A
   * promise holds the stream until it settles (the face reads more for the item, or its client is
   * not reading: wait for 'drain'); what is committed meanwhile is read from the store afterwards.
   * A rejection ends the stream with its error.
   */
  item(item: StreamItem): undefined | Promise<unknown>;
  /**
   * The stream ended by itself: after its last event (no error), or with an error; before open(),
   * an error is a refusal (no such task of this caller's, MAX_STREAMS, a task already terminal).
   * Never called after close(), nor before subscribe() has returned.
   */
  end(err?: unknown): void;
}

/** An open stream: close() ends it (the client left, shutdown) and gives its slot back; end() is not called. */
export interface StreamHandle {
  close(): void;
}

/** Events read from the store at once when a stream catches up. */
const READ_BATCH = 500;
const NOTHING: readonly LoggedEvent[] = [];

/**
 * The task's stream pushed to `sink`: its current state first, then each event of its log in
 * order, ending as `until` says. A snapshot ends the stream only when terminal, so a subscriber to
 * a waiting task follows it through its answer. With `afterSeq`, replays what followed that event.
 * The slot (MAX_STREAMS) is taken before anything is read and given back however the stream ends.
 */
export function subscribe(
  core: EngineContext,
  owner: string,
  id: string,
  o: SubscribeOptions,
  sink: StreamSink,
): StreamHandle {
  return new Subscription(core, owner, id, o, sink);
}

/**
 * One open stream, waiting: its cursor, its task's contextId and its sink, nothing else (no
 * generator, no promise, no closure). It is the hub's listener itself: the entries the hub hands
 * over go straight to the sink when they follow the cursor; anything else (a gap, another
 * instance's write, entries heard while the sink or a read is pending) is read from the store.
 */
class Subscription implements HubListener, StreamHandle {
  readonly #core: EngineContext;
  readonly #id: string;
  readonly #sink: StreamSink;
  readonly #ends: (state: TaskState) => boolean;
  #giveBack: (() => void) | undefined;
  #cursor = 0;
  #contextId = '';
  /** One delivery of the hub, held while busy: by reference, every subscriber of the task shares it. */
  #heard: readonly LoggedEvent[] | undefined;
  /**
   * The log may hold entries neither delivered nor heard (after a resume point, after a touch):
   * read the store. Not after a snapshot: it was read once the hub listened, so it holds whatever
   * was committed before, and the hub hands over whatever comes after.
   */
  #stale = false;
  /** Opening, reading the store or waiting for the sink: what the hub says waits for it. */
  #busy = false;
  #closed = false;

  constructor(core: EngineContext, owner: string, id: string, o: SubscribeOptions, sink: StreamSink) {
    this.#core = core;
    this.#id = id;
    this.#sink = sink;
    this.#ends = o.until === 'terminal' ? isTerminal : settled;
    this.#await(this.#open(owner, o));
  }

  heard(events: readonly LoggedEvent[]): void {
    if (this.#closed) return;
    if (events.length === 0 || this.#heard !== undefined) {
      // Heard without its entries (another instance wrote), or twice while busy: the store has them.
      this.#stale = true;
      this.#heard = undefined;
    } else {
      this.#heard = events;
    }
    if (!this.#busy) this.#run();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#heard = undefined;
    this.#core.journal.hub.unsubscribe(this.#id, this);
    this.#giveBack?.();
  }

  async #open(owner: string, o: SubscribeOptions): Promise<void> {
    // Refused before anything is read.
    this.#giveBack = o.slot ?? this.#core.streams.take(o.holder ?? owner);
    // Before the read: nothing committed after it goes unheard.
    this.#core.journal.hub.subscribe(this.#id, this);
    if (o.afterSeq === undefined) {
      const view = await (o.requireActive ? activeView : get)(this.#core, owner, this.#id);
      if (this.#closed) return;
      // A stream may stay open for hours: it keeps the record's numbers, not the whole task.
      this.#cursor = view.record.lastSeq;
      this.#contextId = view.record.contextId;
      this.#sink.open?.();
      if (this.#closed) return;
      await this.#sink.item({ kind: 'task', seq: view.record.lastSeq, view });
      if (isTerminal(view.record.state)) this.#finish();
    } else {
      // A resume reads the record alone: the log is replayed from the resume point, not folded.
      const found = await record(this.#core, owner, this.#id);
      if (this.#closed) return;
      this.#stale = true;
      this.#cursor = o.afterSeq;
      this.#contextId = found.contextId;
      this.#sink.open?.();
      // A resume after the last event of an ended task has nothing to wait for.
      if (isTerminal(found.state) && o.afterSeq >= found.lastSeq) this.#finish();
    }
  }

  /** Delivers what there is, synchronously while the sink keeps up; idle once nothing is left. */
  #run(): void {
    try {
      while (!this.#closed) {
        const heard = this.#take();
        if (heard?.length === 0) return;
        const held = heard === undefined ? this.#read() : this.#deliver(heard, 0);
        if (held) {
          this.#await(held);
          return;
        }
      }
    } catch (err) {
      this.#finish(err);
    }
  }

  #await(pending: Promise<unknown>): void {
    this.#busy = true;
    pending.then(
      () => {
        this.#busy = false;
        this.#run();
      },
      (err: unknown) => {
        this.#busy = false;
        this.#finish(err);
      },
    );
  }

  /** The hub's entries when they can stand in for a store read (a gap-free run after the cursor); undefined: read. */
  #take(): readonly LoggedEvent[] | undefined {
    const heard = this.#heard;
    this.#heard = undefined;
    if (this.#stale) return undefined;
    if (heard === undefined) return NOTHING;
    let next = this.#cursor + 1;
    for (const entry of heard) {
      if (entry.seq < next) continue;
      if (entry.seq !== next) return undefined;
      next++;
    }
    return heard;
  }

  async #read(): Promise<void> {
    this.#stale = false;
    const batch = await this.#core.journal.store.readEvents(this.#id, this.#cursor, READ_BATCH);
    // A full batch may not be all: read on before trusting the hub again.
    if (batch.length === READ_BATCH) this.#stale = true;
    await this.#deliver(batch, 0);
  }

  /** Hands the entries after the cursor to the sink; a promise when the sink holds the rest back. */
  #deliver(entries: readonly LoggedEvent[], from: number): Promise<void> | undefined {
    for (let i = from; i < entries.length && !this.#closed; i++) {
      const entry = entries[i] as LoggedEvent;
      if (entry.seq <= this.#cursor) continue;
      this.#cursor = entry.seq;
      const held = this.#sink.item({ kind: 'event', entry, contextId: this.#contextId });
      if (entry.event.kind === 'status' && this.#ends(entry.event.state)) {
        if (held) return held.then(() => this.#finish());
        this.#finish();
        return undefined;
      }
      if (held) return held.then(() => this.#deliver(entries, i + 1));
    }
    return undefined;
  }

  #finish(err?: unknown): void {
    if (this.#closed) return;
    this.close();
    this.#sink.end(err);
  }
}
