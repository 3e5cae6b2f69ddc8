import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import type { FaceOptions } from '../http/admission.js';

/** What the HTTP+JSON (REST) face is built with. */
export interface RestOptions extends FaceOptions {
  handler: A2ARequestHandler;
  /** Where internal failures are logged (callers get no detail of them). */
  logger: Logger;
}
