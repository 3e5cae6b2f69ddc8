import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import type { Engine } from '../../engine/engine.js';
import type { FaceOptions } from '../http/admission.js';
import type { TaskCache } from './task-cache.js';

/** What the JSON-RPC endpoint is built with. */
export interface JsonRpcOptions extends FaceOptions {
  handler: A2ARequestHandler;
  /** Serves v1.0 SubscribeToTask directly (see stream-subscriber.ts). */
  engine: Engine;
  /** v1.0 GetTask results, as JSON text for the poll fast path. */
  tasks: TaskCache;
  logger: Logger;
}
