import type { Engine } from '../../engine/engine.js';
import type { Audit } from '../audit.js';
import type { FaceOptions } from '../http/admission.js';

/** What the operator console is built with. */
export interface ConsoleOptions extends FaceOptions {
  engine: Engine;
  /** Every operator action (cancel, deliver again) is audited. */
  audit: Audit;
}
