import type { ServerResponse } from 'node:http';

/**
 * Streams open now in this process, by kind (SSE responses of every face, gRPC server streams):
 * counted where they open and close, read by the metrics at scrape time. One process serves one
 * server, so a count per process is a count per instance.
 */
export const openStreams = { sse: 0, grpc: 0 };

const STREAM = Symbol('taskhandle.stream');

/** Marks `res` as a stream (its duration is the client's, not a request's latency). */
export function markStream(res: ServerResponse): void {
  (res as ServerResponse & { [STREAM]?: true })[STREAM] = true;
}

export const isStream = (res: ServerResponse): boolean => STREAM in res;
