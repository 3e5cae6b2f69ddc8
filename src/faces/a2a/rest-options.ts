import type { Logger } from 'pino';
import type { Engine } from '../../engine/engine.js';
import type { FaceOptions } from '../http/admission.js';
import type { EngineRequestHandler } from './request-handler.js';

/** What the HTTP+JSON (REST) face is built with. */
export interface RestOptions extends FaceOptions {
  /** Our request handler: the SDK's transports serve it, and a streaming send starts with it (startStream). */
  handler: EngineRequestHandler;
  /** Serves v1.0 subscriptions directly (see rest-subscribe.ts). */
  engine: Engine;
  /** Where internal failures are logged (callers get no detail of them). */
  logger: Logger;
}
