import type { IncomingMessage, ServerResponse } from 'node:http';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { ownerKey, type Principal } from '../../auth/principal.js';
import type { GenerationAsk } from '../generation.js';
import { untilDrained } from '../http/sse.js';
import type { Transport } from './errors.js';
import type { ProtocolVersion } from './version.js';

/** What our request handler needs to know about the HTTP request behind an SDK call. */
export interface CallState {
  /** Who is calling. */
  principal: Principal;
  /** JSON-RPC or REST: errors of our own codes are built for it. */
  transport: Transport;
  /** Whose tasks this call may see (authorization scope): the principal's owner key. */
  owner: string;
  /** The protocol version the caller speaks (header for JSON-RPC, path for REST). */
  version: ProtocolVersion;
  /** SSE `Last-Event-ID` of a reconnecting client: resume after this event. */
  lastEventId?: number;
  /** Aborted when the client goes away or the server shuts down. */
  readonly signal: AbortSignal;
  /** Where the call's stream stands: written by the request handler, read by the face (StreamCursor). */
  readonly cursor: StreamCursor;
  /** Resolves once the client has taken what was written: streams wait for it between events. */
  drained(): Promise<void>;
  /**
   * Set by a face that can keep a held answer alive (JSON-RPC, REST): called when a blocking send
   * starts to wait, so that the face writes whitespace before the JSON while it waits (see hold.ts).
   */
  hold?: () => void;
  /** The draft's generation fields the call carried (generation-params.ts), which the SDK drops. */
  generation?: GenerationAsk;
  /** How long a long poll may wait (`Prefer: wait=N`, capped at 30 s). */
  pollWaitMs?: number;
}

const KEY = 'taskhandle.call';

/**
 * The state of one HTTP request's call. Its signal (client gone, or server shutting down) is made
 * on first use: most calls (polls, non-blocking sends) never wait, and abort signals are not free.
 */
export function newCallState(
  req: IncomingMessage,
  res: ServerResponse,
  o: { principal: Principal; transport: Transport; version: ProtocolVersion; shutdown: AbortSignal },
): CallState {
  let signal: AbortSignal | undefined;
  return {
    principal: o.principal,
    transport: o.transport,
    owner: ownerKey(o.principal),
    version: o.version,
    lastEventId: parseLastEventId(req.headers['last-event-id']),
    cursor: new StreamCursor(),
    drained: () => untilDrained(res),
    get signal() {
      if (!signal) {
        const gone = new AbortController();
        // A reason string, not the default: abort() would build a DOMException (with its stack) for
        // every stream that ends, which thousands of subscribers to one task pay at once.
        if (res.closed) gone.abort('client gone');
        else res.once('close', () => gone.abort('client gone'));
        signal = AbortSignal.any([gone.signal, o.shutdown]);
      }
      return signal;
    },
  };
}

export function newCallContext(state: CallState, extensions: string[]): ServerCallContext {
  return new ServerCallContext({
    requestedVersion: state.version,
    requestedExtensions: extensions,
    state: new Map([[KEY, state]]),
  });
}

export function callState(context: ServerCallContext): CallState {
  const state = context.state.get(KEY) as CallState | undefined;
  if (!state) throw new Error('call context was not built by newCallContext');
  return state;
}

/** Parses a `Last-Event-ID` header: our event ids are the task log's sequence numbers. */
export function parseLastEventId(value: string | string[] | undefined): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/**
 * Where a stream stands: what the SSE writer needs to know about the event being written. One
 * writer, one reader: the request handler's stream (request-handler.ts) writes it, with
 * {@link StreamCursor.wrote} before it yields each event and {@link StreamCursor.stands} when a
 * resume is known to be served; the face that writes the stream out (jsonrpc-dispatch.ts, rest.ts,
 * grpc-call.ts) reads it, through {@link CursorReader}.
 */
export class StreamCursor {
  #seq: number | undefined;
  #closing = false;
  #stood = false;
  #onStand: (() => void) | undefined;

  /** Writer: the event about to be yielded has this log sequence number, and ends the stream or not. */
  wrote(seq: number, closing?: boolean): void {
    this.#seq = seq;
    if (closing !== undefined) this.#closing = closing;
  }

  /** Writer: the stream is known to be served, before its first event comes (a resume may wait long). */
  stands(): void {
    this.#stood = true;
    this.#onStand?.();
  }

  /** Reader: the event's log sequence number: its SSE id. */
  get seq(): number | undefined {
    return this.#seq;
  }

  /**
   * Reader: the event ends the stream (a terminal or interrupted status). v0.3 calls that
   * `final: true`; the SDK's v0.3 translation marks only terminal states, so the writer completes it.
   */
  get closing(): boolean {
    return this.#closing;
  }

  /**
   * Reader: resolves once the stream stands. A face that holds its answer back until the stream's
   * first event (v1.0 JSON-RPC, to answer a refusal as plain JSON) races it with that event. Made
   * on first use: only that face waits for it.
   */
  whenStanding(): Promise<void> {
    if (this.#stood) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onStand = resolve;
    });
  }
}

/** What a face that writes a stream out may do with its cursor: read it. */
export type CursorReader = Pick<StreamCursor, 'seq' | 'closing' | 'whenStanding'>;

/**
 * Marks a v0.3 status update `final` when it closes the stream: a JSON-RPC result
 * (`{"kind": "status-update", ...}`) or a REST event (`{"statusUpdate": {...}}`).
 */
export function finalizeLegacyEvent(result: unknown, cursor: CursorReader): void {
  if (!cursor.closing || !isObject(result)) return;
  if (result.kind === 'status-update') result.final = true;
  else if (isObject(result.statusUpdate)) result.statusUpdate.final = true;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
