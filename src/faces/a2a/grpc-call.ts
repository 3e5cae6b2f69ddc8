import type { IncomingHttpHeaders } from 'node:http';
import type { StreamResponse } from '@a2a-js/sdk';
import { A2AError, RequestMalformedError, VersionNotSupportedError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler, ServerCallContext, User } from '@a2a-js/sdk/server';
import type { Metadata, ServerUnaryCall, ServerWritableStream } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { ownerKey } from '../../auth/principal.js';
import { type GenerationAsk, generationOf, pollWaitMs } from '../generation.js';
import type { Admission, Caller } from '../http/admission.js';
import { openStreams } from '../http/open-streams.js';
import { type CallState, callState, parseLastEventId, StreamCursor } from './call-state.js';
import { INTERNAL_MESSAGE } from './errors.js';
import { GRPC_STATUS_CODE, GrpcStatusError, refusalError } from './grpc-status.js';
import { unsupported, versionOf } from './version.js';

export type GrpcCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>;

/** The metadata key a gRPC caller resumes a stream with: the `eventId` of the last event it processed. */
export const LAST_EVENT_ID_KEY = 'last-event-id';

const STREAMING_METHOD = /\/(SendStreamingMessage|SubscribeToTask)$/;

/** The admitted caller of one gRPC call, handed by the SDK's user builder to our context builder. */
export class GrpcCaller implements User {
  constructor(readonly state: CallState) {}
  get isAuthenticated(): boolean {
    return this.state.principal.via !== 'anonymous';
  }
  get userName(): string {
    return this.state.owner;
  }
}

/**
 * Admits a gRPC call as the HTTP faces admit a request (credentials from the `authorization` or
 * `x-api-key` metadata, the same rate limits) and builds its call state. The service is v1.0's
 * (`lf.a2a.v1`): a call without `a2a-version` is a v1.0 call; one naming another version is refused.
 */
export async function admitCall(
  call: GrpcCall,
  admit: (req: Caller) => Promise<Admission>,
  shutdown: AbortSignal,
): Promise<GrpcCaller> {
  const headers = callHeaders(call);
  return callerOf(call, headers, await admitHeaders(call, headers, admit), shutdown);
}

/**
 * A call's metadata as the headers admission reads, its :authority as their Host (a browser cannot
 * make a gRPC call, but the rule is one); throws VersionNotSupportedError for a version other than 1.0.
 */
export function callHeaders(call: GrpcCall): IncomingHttpHeaders {
  const headers = headersOf(call.metadata);
  const version = headers['a2a-version']?.toString().trim();
  if (version && versionOf(version) !== '1.0')
    throw new VersionNotSupportedError({
      message: `A2A-Version ${unsupported(version)} over gRPC: this service speaks 1.0 (send A2A-Version: 1.0, or none); v0.3 peers: use JSON-RPC or HTTP+JSON`,
      metadata: { supportedVersions: '1.0' },
    });
  headers.host = call.getHost();
  return headers;
}

/** Admission of a call from its {@link callHeaders} and peer. */
export const admitHeaders = (
  call: GrpcCall,
  headers: IncomingHttpHeaders,
  admit: (req: Caller) => Promise<Admission>,
): Promise<Admission> => admit({ headers, socket: { remoteAddress: addressOf(call.getPeer()) } });

/** The caller of an admitted call, with its call state; a refused one throws its gRPC error. */
export function callerOf(
  call: GrpcCall,
  headers: IncomingHttpHeaders,
  auth: Admission,
  shutdown: AbortSignal,
): GrpcCaller {
  if (!auth.ok) throw refusalError(auth.refusal);
  // grpc-js hands unary calls a writable stream too: the method says which kind this is.
  const streaming = STREAMING_METHOD.test(call.getPath());
  let signal: AbortSignal | undefined;
  const state: CallState = {
    principal: auth.principal,
    transport: 'grpc',
    owner: ownerKey(auth.principal),
    version: '1.0',
    lastEventId: parseLastEventId(headers[LAST_EVENT_ID_KEY]),
    cursor: new StreamCursor(),
    drained: () =>
      streaming ? untilDrained(call as ServerWritableStream<unknown, unknown>) : Promise.resolve(),
    // Made on first use, as for HTTP: most calls never wait.
    get signal() {
      signal ??= AbortSignal.any([shutdown, ...callSignals(call, streaming)]);
      return signal;
    },
  };
  state.generation = grpcGenerationAsk(call.getPath(), headers);
  state.pollWaitMs = pollWaitMs(headers.prefer);
  return new GrpcCaller(state);
}

/**
 * The generations extension's fields of a gRPC call, which v1.0's messages have no field for: call
 * metadata named as the draft's fields are (`current-generation` on GetTask, `if-generation-match`
 * on CancelTask and SendMessage), a wait as `prefer: wait=N`.
 */
function grpcGenerationAsk(path: string, headers: IncomingHttpHeaders): GenerationAsk | undefined {
  const method = path.slice(path.lastIndexOf('/') + 1);
  const key = method === 'GetTask' ? CURRENT_GENERATION_KEY : IF_GENERATION_MATCH_KEY;
  const raw = headers[key];
  if (raw === undefined || !/^(GetTask|CancelTask|SendMessage|SendStreamingMessage)$/.test(method))
    return undefined;
  const value = generationOf(String(raw).trim(), key);
  if (typeof value === 'object') throw new RequestMalformedError(`Invalid metadata: ${value.problem}`);
  if (value === undefined) return undefined;
  return method === 'GetTask' ? { currentGeneration: value } : { ifGenerationMatch: value };
}

/** The call metadata a gRPC caller long-polls GetTask with: the generation it has seen. */
export const CURRENT_GENERATION_KEY = 'current-generation';
/** The call metadata of a conditional CancelTask or SendMessage: the generation it applies at. */
export const IF_GENERATION_MATCH_KEY = 'if-generation-match';

/**
 * Our request handler as the SDK's gRPC service calls it. Every error leaves as a gRPC status: A2A's
 * own as the spec maps them (the SDK adds their ErrorInfo), anything else as INTERNAL without detail.
 * Each stream event carries its event id, and a stream that the shutdown cut ends UNAVAILABLE.
 */
export function grpcHandler(
  handler: A2ARequestHandler,
  o: { shutdown: AbortSignal; logger: Logger; maxJsonDepth: number },
): A2ARequestHandler {
  const { shutdown, logger } = o;
  // Decoded protobuf nests as deep as the JSON of the same request (a oneof's {$case, value} level
  // where JSON-RPC has its envelope): MAX_JSON_DEPTH applies as it does to a JSON body.
  const checked = (params: unknown) => {
    if (nestsDeeper(params, o.maxJsonDepth))
      throw new RequestMalformedError(
        `The request nests deeper than ${o.maxJsonDepth} levels (MAX_JSON_DEPTH)`,
      );
  };
  const unary =
    <P, R>(method: (params: P, context: ServerCallContext) => Promise<R>) =>
    async (params: P, context: ServerCallContext): Promise<R> => {
      try {
        checked(params);
        return await method.call(handler, params, context);
      } catch (err) {
        throw grpcError(err, logger);
      }
    };
  const streamed = async function* (
    params: unknown,
    events: () => AsyncGenerator<StreamResponse>,
    context: ServerCallContext,
  ) {
    const { cursor } = callState(context);
    openStreams.grpc++;
    try {
      checked(params);
      // Each event carries its id in its metadata (the request handler puts it there, for every
      // transport): gRPC has no per-message headers for SSE's `id:`.
      yield* events();
    } catch (err) {
      throw grpcError(err, logger);
    } finally {
      openStreams.grpc--;
    }
    // The stream ended before the task settled because this server is stopping: a status a client
    // retries on (at another instance, or after the restart), not the OK of a finished stream.
    if (shutdown.aborted && !cursor.closing)
      throw new GrpcStatusError(
        GRPC_STATUS_CODE.UNAVAILABLE,
        `The server is shutting down; resubscribe with metadata ${LAST_EVENT_ID_KEY}: ${cursor.seq ?? ''}`,
      );
  };
  return {
    getAgentCard: () => handler.getAgentCard(),
    getAuthenticatedExtendedAgentCard: unary(handler.getAuthenticatedExtendedAgentCard),
    sendMessage: unary(handler.sendMessage),
    sendMessageStream: (params, context) =>
      streamed(params, () => handler.sendMessageStream(params, context), context),
    resubscribe: (params, context) => streamed(params, () => handler.resubscribe(params, context), context),
    getTask: unary(handler.getTask),
    listTasks: unary(handler.listTasks),
    cancelTask: unary(handler.cancelTask),
    createTaskPushNotificationConfig: unary(handler.createTaskPushNotificationConfig),
    getTaskPushNotificationConfig: unary(handler.getTaskPushNotificationConfig),
    listTaskPushNotificationConfigs: unary(handler.listTaskPushNotificationConfigs),
    deleteTaskPushNotificationConfig: unary(handler.deleteTaskPushNotificationConfig),
  };
}

function grpcError(err: unknown, logger: Logger): unknown {
  if (err instanceof A2AError) return err;
  // Our handler logged its own internal failures already (and worded them so).
  if (!(err instanceof Error && err.message === INTERNAL_MESSAGE)) logger.error({ err }, 'gRPC call failed');
  return new GrpcStatusError(GRPC_STATUS_CODE.INTERNAL, INTERNAL_MESSAGE);
}

/** Whether objects and arrays nest deeper than `max` levels (strings and buffers are not walked). */
export function nestsDeeper(value: unknown, max: number, depth = 1): boolean {
  if (typeof value !== 'object' || value === null || Buffer.isBuffer(value)) return false;
  if (depth > max) return true;
  for (const v of Array.isArray(value) ? value : Object.values(value))
    if (nestsDeeper(v, max, depth + 1)) return true;
  return false;
}

/** Metadata as the headers admission reads; binary (`-bin`) entries are not credentials and are left out. */
function headersOf(metadata: Metadata): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === 'string') headers[key] = value;
  }
  return headers;
}

/** `127.0.0.1:52344` or `::1:52344` (grpc-js's peer) -> the address: anonymous rates are per address. */
const addressOf = (peer: string): string => {
  const colon = peer.lastIndexOf(':');
  return colon > 0 ? peer.slice(0, colon) : peer;
};

/**
 * What ends a call's waits: the client cancelling (or going away), and its deadline. A unary call
 * stops waiting shortly before its deadline, so that a blocking send still answers with the task as it
 * stands instead of DEADLINE_EXCEEDED; a stream runs to the deadline itself.
 */
function callSignals(call: GrpcCall, streaming: boolean): AbortSignal[] {
  const gone = new AbortController();
  if (call.cancelled) gone.abort('client gone');
  else call.once('cancelled', () => gone.abort('client gone'));
  const deadline = call.getDeadline();
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (!Number.isFinite(at)) return [gone.signal];
  const left = Math.max(0, at - Date.now());
  // A quarter of a short deadline: answering (the read, the encoding) must fit in what is left
  // on a busy machine too (a tenth, 250 ms of a 2.5 s deadline, was seen missed under load).
  const margin = streaming ? 0 : Math.min(DEADLINE_MARGIN_MS, left / 4);
  return [gone.signal, AbortSignal.timeout(Math.floor(left - margin))];
}

/** The most a unary call stops waiting before its deadline, to answer in time. */
const DEADLINE_MARGIN_MS = 1000;

/** Resolves once the call's write buffer has room again (or the call has ended). */
export function untilDrained(call: ServerWritableStream<unknown, unknown>): Promise<void> {
  if (!call.writableNeedDrain || call.cancelled || call.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      call.off('close', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
    call.on('close', done);
  });
}
