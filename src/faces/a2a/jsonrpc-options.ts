import type { Logger } from 'pino';
import type { Engine } from '../../engine/engine.js';
import type { FaceOptions } from '../http/admission.js';
import type { EngineRequestHandler } from './request-handler.js';
import type { TaskCache } from './task-cache.js';

/** What the JSON-RPC endpoint is built with. */
export interface JsonRpcOptions extends FaceOptions {
  /**
   * Our request handler: the SDK's transports serve it, and a streaming send starts with it
   * (startStream: jsonrpc-send-stream.ts, legacy-send.ts).
   */
  handler: EngineRequestHandler;
  /** Serves v1.0 SubscribeToTask directly (see stream-subscriber.ts). */
  engine: Engine;
  /** v1.0 GetTask results, as JSON text for the poll fast path. */
  tasks: TaskCache;
  logger: Logger;
}
