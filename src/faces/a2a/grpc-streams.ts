import type { IncomingHttpHeaders } from 'node:http';
import {
  Extensions,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
} from '@a2a-js/sdk';
import { A2AError, RequestMalformedError } from '@a2a-js/sdk/errors';
import { buildGrpcErrorMetadata, grpcStatusFor } from '@a2a-js/sdk/errors/grpc';
import { A2AService } from '@a2a-js/sdk/server/grpc';
import { type handleServerStreamingCall, Metadata, type ServerWritableStream } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { ownerKey } from '../../auth/principal.js';
import type { Engine } from '../../engine/engine.js';
import type { LoggedEvent } from '../../engine/events.js';
import { type StreamItem, settled } from '../../engine/streams.js';
import type { StreamHandle, StreamSink } from '../../engine/subscription.js';
import type { Admission } from '../http/admission.js';
import { openStreams } from '../http/open-streams.js';
import { type OpenSubscriptions, openUntil } from '../http/open-subscriptions.js';
import { newCallContext, parseLastEventId } from './call-state.js';
import { INTERNAL_MESSAGE, toProtocolError } from './errors.js';
import { callerOf, callHeaders, LAST_EVENT_ID_KEY, nestsDeeper, untilDrained } from './grpc-call.js';
import type { Admissions } from './grpc-poll.js';
import { GRPC_STATUS_CODE, GrpcStatusError } from './grpc-status.js';
import type { EngineRequestHandler } from './request-handler.js';
import { toSdkTask, toStreamResponse, withEventId } from './wire.js';

/** The metadata a caller asks for A2A extensions with (A2A-Extensions, lower-cased as gRPC keys are). */
const EXTENSIONS_KEY = 'a2a-extensions';

type Subscribe = handleServerStreamingCall<SubscribeToTaskRequest, StreamResponse>;
type Send = handleServerStreamingCall<SendMessageRequest, StreamResponse>;
type Call = ServerWritableStream<unknown, StreamResponse>;

/** What the gRPC stream paths need beside the call. */
export interface GrpcStreamOptions {
  engine: Engine;
  /** Our request handler: a streaming send is made by it before its stream (startStream). */
  handler: EngineRequestHandler;
  admissions: Admissions;
  shutdown: AbortSignal;
  logger: Logger;
  maxJsonDepth: number;
  /** Whether the call's span records: its handler then returns a promise settled when the stream ends. */
  traced: () => boolean;
}

/**
 * gRPC SubscribeToTask served straight from the engine's subscription, as v1.0 JSON-RPC's is
 * (jsonrpc-subscribe.ts): the same events, event ids, refusals and statuses as the SDK's service
 * over our request handler, without its call context, user, async generators and promise per event
 * held for the stream's lifetime. What it does not serve (a tenant, no task id, another A2A version,
 * a caller admission refuses) takes the SDK's path, `full`, which words those answers, with the
 * admission made here.
 */
export function fastSubscribe(full: Subscribe, o: GrpcStreamOptions): Subscribe {
  const open = openUntil(o.shutdown);
  return (call) => {
    const { id, tenant } = call.request;
    if (!id.trim() || tenant) return full(call);
    return admitted(full, o, call, (_auth, owner, headers) => {
      const stream = new GrpcSubscriber(o, open, call);
      stream.subscribe(owner, id, parseLastEventId(headers[LAST_EVENT_ID_KEY]));
      return stream;
    });
  };
}

/**
 * gRPC SendStreamingMessage the same way: the send is our request handler's (startStream, with the
 * call context it needs for that moment only), and the task's stream the engine's subscription.
 */
export function fastSend(full: Send, o: GrpcStreamOptions): Send {
  const open = openUntil(o.shutdown);
  return (call) =>
    admitted(full, o, call, (auth, _owner, headers) => {
      const stream = new GrpcSubscriber(o, open, call);
      void stream.send(call.request, headers, auth);
      return stream;
    });
}

/**
 * Admits a call and serves it with `serve`; another A2A version or a refused caller goes the SDK's
 * way (`full`), handed the admission made here. The promise it returns (settled when the stream
 * ends) is made only for a span that waits for it.
 */
function admitted<Req>(
  full: (call: ServerWritableStream<Req, StreamResponse>) => void,
  o: GrpcStreamOptions,
  call: ServerWritableStream<Req, StreamResponse>,
  serve: (auth: Admission & { ok: true }, owner: string, headers: IncomingHttpHeaders) => GrpcSubscriber,
): Promise<void> | undefined {
  let headers: IncomingHttpHeaders;
  try {
    headers = callHeaders(call);
  } catch {
    // another version: refused on the full path
    full(call);
    return undefined;
  }
  const traced = o.traced();
  const admission = o.admissions.admit(call, headers);
  const fallBack = () => {
    o.admissions.handOver(call, headers, admission);
    full(call);
  };
  const served = admission.then((auth) => {
    if (!auth.ok) return fallBack();
    const stream = serve(auth, ownerKey(auth.principal), headers);
    return traced ? stream.ended : undefined;
  }, fallBack);
  return traced ? served : undefined;
}

/**
 * One gRPC stream, the sink of its engine subscription: each item is one write of its message. A
 * refusal (an unknown task or another owner's, a terminal one, MAX_STREAMS) ends the call with the
 * status the SDK's service gives its error; a client that cancels (or whose deadline passes) closes
 * the subscription; at shutdown the call ends UNAVAILABLE, naming where to resume, unless its last
 * event had ended the stream.
 */
class GrpcSubscriber implements StreamSink {
  readonly #o: GrpcStreamOptions;
  readonly #open: OpenSubscriptions;
  readonly #call: Call;
  #handle: StreamHandle | undefined;
  /** The last event written: its id and whether it ended the stream. */
  #seq: number | undefined;
  #closing = false;
  #done = false;
  #ended: (() => void) | undefined;

  constructor(o: GrpcStreamOptions, open: OpenSubscriptions, call: Call) {
    this.#o = o;
    this.#open = open;
    this.#call = call;
  }

  /** Settles when the call has ended (made only for a span that waits for it). */
  get ended(): Promise<void> {
    return new Promise((resolve) => {
      if (this.#done) resolve();
      else this.#ended = resolve;
    });
  }

  /** SubscribeToTask: the task's stream, or after `lastEventId` (a resume). */
  subscribe(owner: string, taskId: string, lastEventId: number | undefined): void {
    if (!this.#begin()) return;
    const requireActive = lastEventId === undefined;
    this.#handle = this.#o.engine.subscribe(owner, taskId, { afterSeq: lastEventId, requireActive }, this);
    this.#open.add(this);
  }

  /**
   * SendStreamingMessage: the send, then the stream of its task (with the slot the send took), or
   * its one event (a direct reply, an approver's receipt). A send refused ends the call with its error.
   */
  async send(request: SendMessageRequest, headers: IncomingHttpHeaders, auth: Admission): Promise<void> {
    if (!this.#begin()) return;
    try {
      const { state } = callerOf(this.#call, headers, auth, this.#o.shutdown);
      // Decoded protobuf nests as deep as the JSON of the same request (grpc-call.ts).
      if (nestsDeeper(request, this.#o.maxJsonDepth))
        throw new RequestMalformedError(
          `The request nests deeper than ${this.#o.maxJsonDepth} levels (MAX_JSON_DEPTH)`,
        );
      const extensions = this.#call.metadata.get(EXTENSIONS_KEY).map(String).join(',');
      const context = newCallContext(state, Extensions.parseServiceParameter(extensions));
      const start = await this.#o.handler.startStream(request, context);
      if (start.kind === 'once') {
        this.#write(start.response, 0, true);
        this.#endWith();
        return;
      }
      // The client went away while the task was made: the task stays, the slot goes back.
      if (this.#done) {
        start.slot();
        return;
      }
      const o = { afterSeq: state.lastEventId, slot: start.slot };
      this.#handle = this.#o.engine.subscribe(state.owner, start.taskId, o, this);
      this.#open.add(this);
    } catch (err) {
      this.end(err);
    }
  }

  /** Counts the stream and listens for its end; false when its client has gone already. */
  #begin(): boolean {
    openStreams.grpc++;
    this.#call.once('cancelled', () => this.#finish());
    if (this.#call.cancelled) this.#finish();
    return !this.#done;
  }

  open(): void {
    // The stream stands (a resume may wait long for its next event): the response headers go now.
    this.#call.sendMetadata(new Metadata());
  }

  item(item: StreamItem): undefined | Promise<unknown> {
    if (item.kind === 'task') {
      const task = withEventId({ payload: { $case: 'task', value: toSdkTask(item.view) } }, item.seq);
      return this.#write(task, item.seq, false);
    }
    const { entry } = item;
    const closing = entry.event.kind === 'status' && settled(entry.event.state);
    const response = streamResponseOf(this.#o.engine, entry, item.contextId);
    if (response instanceof Promise) return response.then((r) => this.#write(r, entry.seq, closing));
    return this.#write(response, entry.seq, closing);
  }

  end(err?: unknown): void {
    if (err === undefined) this.#endWith();
    else this.#endWith(this.#status(err));
  }

  /** Shutdown: the subscription closes, and the client is told to resume elsewhere or later. */
  close(): void {
    this.#handle?.close();
    if (this.#closing) this.#endWith();
    else
      this.#endWith(
        new GrpcStatusError(
          GRPC_STATUS_CODE.UNAVAILABLE,
          `The server is shutting down; resubscribe with metadata ${LAST_EVENT_ID_KEY}: ${this.#seq ?? ''}`,
        ),
      );
  }

  #write(response: StreamResponse | null, seq: number, closing: boolean): undefined | Promise<unknown> {
    if (this.#done) return undefined;
    // An entry streams do not show moves the resume point all the same.
    this.#seq = seq;
    this.#closing = closing;
    if (response === null) return undefined;
    // A client that does not read holds its stream here (the store keeps the rest), not in memory.
    if (!this.#call.write(response)) return untilDrained(this.#call);
    return undefined;
  }

  /** The error as the SDK's service answers it: its status, message and ErrorInfo. */
  #status(err: unknown): A2AError {
    const protocol = toProtocolError(err, 'grpc', (cause) => {
      // The request handler logged its own internal failures already (and worded them so).
      if (!(cause instanceof Error && cause.message === INTERNAL_MESSAGE))
        this.#o.logger.error({ err: cause }, 'internal error');
    });
    return protocol instanceof A2AError
      ? protocol
      : new GrpcStatusError(GRPC_STATUS_CODE.INTERNAL, INTERNAL_MESSAGE);
  }

  #endWith(err?: A2AError): void {
    if (this.#done) return;
    this.#finish();
    if (err === undefined) {
      this.#call.end();
      return;
    }
    const metadata = buildGrpcErrorMetadata(Metadata, err);
    // grpc-js ends a server stream that emits 'error' with that status.
    this.#call.emit('error', {
      code: grpcStatusFor(err),
      details: err.message,
      ...(metadata && { metadata }),
    });
  }

  /** Gives everything back once, however the call ended. */
  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    openStreams.grpc--;
    this.#open.delete(this);
    this.#handle?.close();
    this.#ended?.();
  }
}

/**
 * Every subscriber of a task receives the same log entry objects from the event hub: each is
 * converted, and its message encoded, once for all of them (a transition watched by thousands of
 * streams); a promise while an artifact chunk stored out of the log is read back. Null: an entry
 * streams do not show.
 */
const converted = new WeakMap<LoggedEvent, StreamResponse | null | Promise<StreamResponse | null>>();
function streamResponseOf(
  engine: Engine,
  entry: LoggedEvent,
  contextId: string,
): StreamResponse | null | Promise<StreamResponse | null> {
  let response = converted.get(entry);
  if (response === undefined) {
    const convert = (full: LoggedEvent): StreamResponse | null => {
      const event = toStreamResponse(full, contextId);
      const done = event ? withEventId(event, entry.seq) : null;
      if (done) encoded.set(done, encode(done));
      converted.set(entry, done);
      return done;
    };
    const full = engine.withContent(entry);
    response = full instanceof Promise ? full.then(convert) : convert(full);
    if (response instanceof Promise) converted.set(entry, response);
  }
  return response;
}

type Bytes = ReturnType<typeof A2AService.subscribeToTask.responseSerialize>;
const encode = A2AService.subscribeToTask.responseSerialize;
const encoded = new WeakMap<StreamResponse, Bytes>();

/** A stream message's protobuf encoding: made once for an event shared by its subscribers. */
export const streamBytes = (response: StreamResponse): Bytes => encoded.get(response) ?? encode(response);
