import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import type { Engine } from '../../engine/engine.js';
import type { FaceOptions } from '../http/admission.js';

/** What the HTTP+JSON (REST) face is built with. */
export interface RestOptions extends FaceOptions {
  handler: A2ARequestHandler;
  /** Serves v1.0 subscriptions directly (see rest-subscribe.ts). */
  engine: Engine;
  /** Where internal failures are logged (callers get no detail of them). */
  logger: Logger;
}
