import { Metadata, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js';
import { GRPC_STATUS_CODE } from './grpc-status.js';

/** What a gRPC call is told while the server is starting: the words of the HTTP faces' 503. */
export const STARTING_MESSAGE = 'taskhandle is starting; retry in a moment';

/** The pause a client retrying is asked for (gRPC's retry pushback, HTTP's `Retry-After: 1`). */
const RETRY_PUSHBACK_MS = '1000';

type Handler = (call: ServerWritableStream<unknown, unknown>, callback?: sendUnaryData<unknown>) => unknown;

/**
 * The service's handlers, each answering UNAVAILABLE until `serving()` says the server has started.
 * The gRPC port listens before the agent card is made (the card names that port), and the SDK's
 * service reads the card for every call: a call in between was answered with the card's absence
 * as an internal failure. A client retries UNAVAILABLE; `grpc-retry-pushback-ms` says when.
 *
 * @example server.addService(A2AService, untilServing(service, () => card !== undefined));
 */
export function untilServing<T extends object>(service: T, serving: () => boolean): T {
  const gated: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(service)) {
    gated[name] = typeof handler === 'function' ? gate(handler as Handler, serving) : handler;
  }
  return gated as T;
}

function gate(handler: Handler, serving: () => boolean): Handler {
  return (call, callback) => {
    if (serving()) return handler(call, callback);
    const metadata = new Metadata();
    metadata.set('grpc-retry-pushback-ms', RETRY_PUSHBACK_MS);
    const status = { code: GRPC_STATUS_CODE.UNAVAILABLE, details: STARTING_MESSAGE, metadata };
    // A unary call answers through its callback; a stream ends with the status it emits.
    if (callback) callback(status, null);
    else call.emit('error', status);
    return undefined;
  };
}
