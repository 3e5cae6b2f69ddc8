import { readFileSync } from 'node:fs';
import { grpcService } from '@a2a-js/sdk/server/grpc';
import { Server, ServerCredentials } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { isLoopback } from '../../auth/open.js';
import { ConfigError } from '../../config/error.js';
import type { Engine } from '../../engine/engine.js';
import { spanRecording, tracedService } from '../../telemetry/grpc-spans.js';
import type { FaceOptions } from '../http/admission.js';
import { newCallContext } from './call-state.js';
import { type GrpcCaller, grpcHandler } from './grpc-call.js';
import { A2A_SERVICE, Admissions, fastGetTask } from './grpc-poll.js';
import { untilServing } from './grpc-starting.js';
import { fastSend, fastSubscribe, streamBytes } from './grpc-streams.js';
import type { EngineRequestHandler } from './request-handler.js';
import type { TaskCache } from './task-cache.js';

export interface GrpcOptions
  extends Pick<FaceOptions, 'admit' | 'maxBodyBytes' | 'maxJsonDepth' | 'keepAliveMs' | 'shutdown'> {
  handler: EngineRequestHandler;
  /** The engine the streams subscribe to (grpc-streams.ts). */
  engine: Engine;
  /** Whether the server has started (its agent card is made): until then every call is UNAVAILABLE. */
  serving: () => boolean;
  /** The request handler's task cache: plain polls are answered from it (grpc-poll.ts). */
  tasks: TaskCache;
  logger: Logger;
}

/** The gRPC side once bound: where it listens and how it stops. */
export interface GrpcSide {
  /** The bound port (GRPC_PORT, or the one the system gave for 0). */
  port: number;
  /** TLS or plaintext: what a client's channel credentials must be. */
  tls: boolean;
  /** Takes no new calls; resolves once the calls in progress have ended. */
  drain(): Promise<void>;
  /** Ends the calls still open (after {@link drain} had its time). */
  close(): void;
}

/** Where and how the gRPC binding listens: GRPC_PORT on HOST, its TLS files, GRPC_ALLOW_PLAINTEXT. */
export interface GrpcListen {
  host: string;
  port: number;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  allowPlaintext: boolean;
}

/**
 * The A2A gRPC binding (service `lf.a2a.v1.A2AService`), served by the SDK's gRPC service over the
 * same request handler as JSON-RPC and HTTP+JSON, on its own port (GRPC_PORT) on HOST; GetTask and the
 * streams (SubscribeToTask, SendStreamingMessage) take shorter paths (grpc-poll.ts, grpc-streams.ts). Callers are
 * admitted from their metadata (`authorization`, `x-api-key`) as HTTP callers are from headers; a
 * stream resumes after the event named by the `last-event-id` metadata.
 * @example const grpc = await startGrpc({ host, port: 50051, allowPlaintext: false }, { handler, engine, serving, tasks, admit, maxBodyBytes, keepAliveMs, shutdown, logger });
 */
export async function startGrpc(listen: GrpcListen, o: GrpcOptions): Promise<GrpcSide> {
  const credentials = credentialsOf(listen);
  const server = new Server({
    // A request larger than a JSON body may be is refused (RESOURCE_EXHAUSTED) before it is decoded.
    'grpc.max_receive_message_length': o.maxBodyBytes,
    // HTTP/2 pings play the part of SSE's keep-alive comments: idle streams stay open through proxies.
    'grpc.keepalive_time_ms': o.keepAliveMs,
    // No channelz service is served: its per-call counters and timestamps would be kept for no one.
    'grpc.enable_channelz': 0,
  });
  const admissions = new Admissions(o.admit, o.shutdown);
  const service = grpcService({
    requestHandler: grpcHandler(o.handler, o),
    userBuilder: admissions.userBuilder,
    contextBuilder: ({ user, extensions }) => newCallContext((user as GrpcCaller).state, extensions ?? []),
  });
  const streams = {
    engine: o.engine,
    handler: o.handler,
    admissions,
    shutdown: o.shutdown,
    logger: o.logger,
    maxJsonDepth: o.maxJsonDepth,
    traced: spanRecording,
  };
  // Each event's message is encoded once for all the streams that write it (grpc-streams.ts).
  const encoded = { responseSerialize: streamBytes };
  server.addService(
    {
      ...A2A_SERVICE,
      subscribeToTask: { ...A2A_SERVICE.subscribeToTask, ...encoded },
      sendStreamingMessage: { ...A2A_SERVICE.sendStreamingMessage, ...encoded },
    },
    tracedService(
      untilServing(
        {
          ...service,
          getTask: fastGetTask(service.getTask, o.tasks, admissions),
          subscribeToTask: fastSubscribe(service.subscribeToTask, streams),
          sendStreamingMessage: fastSend(service.sendStreamingMessage, streams),
        },
        o.serving,
      ),
    ),
  );
  const host = listen.host.includes(':') ? `[${listen.host}]` : listen.host;
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${listen.port}`, credentials.credentials, (err, actual) => {
      if (err)
        reject(
          new ConfigError(`HOST=${listen.host} GRPC_PORT=${listen.port}: cannot listen (${err.message})`),
        );
      else resolve(actual);
    });
  });
  let drained: Promise<void> | undefined;
  return {
    port: bound,
    tls: credentials.tls,
    drain: () => {
      drained ??= new Promise((resolve) => server.tryShutdown(() => resolve()));
      return drained;
    },
    close: () => server.forceShutdown(),
  };
}

/**
 * TLS from GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE; without them plaintext, which is refused on an
 * address other machines reach unless GRPC_ALLOW_PLAINTEXT=true says a proxy in front does the TLS.
 */
function credentialsOf(listen: GrpcListen): { credentials: ServerCredentials; tls: boolean } {
  const { tlsCertFile: certFile, tlsKeyFile: keyFile } = listen;
  if (certFile && keyFile) {
    const read = (setting: string, file: string) => {
      try {
        return readFileSync(file);
      } catch (err) {
        throw new ConfigError(`${setting}=${file}: cannot read it (${(err as NodeJS.ErrnoException).code})`);
      }
    };
    const pair = {
      cert_chain: read('GRPC_TLS_CERT_FILE', certFile),
      private_key: read('GRPC_TLS_KEY_FILE', keyFile),
    };
    try {
      return { credentials: ServerCredentials.createSsl(null, [pair], false), tls: true };
    } catch (err) {
      throw new ConfigError(
        `GRPC_TLS_CERT_FILE/GRPC_TLS_KEY_FILE: not a usable PEM pair (${(err as Error).message})`,
      );
    }
  }
  if (!isLoopback(listen.host) && !listen.allowPlaintext)
    throw new ConfigError(
      `HOST=${listen.host} GRPC_PORT=${listen.port}: refusing plaintext gRPC on an address other machines can reach. ` +
        'Set GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE, or GRPC_ALLOW_PLAINTEXT=true if a proxy in front does the TLS.',
    );
  return { credentials: ServerCredentials.createInsecure(), tls: false };
}
