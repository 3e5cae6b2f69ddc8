import type { Engine } from '../../engine/engine.js';
import type { Audit } from '../audit.js';
import type { FaceOptions } from '../http/admission.js';

/** What the approvals inbox is built with. */
export interface InboxOptions extends FaceOptions {
  engine: Engine;
  /** Every answer is audited, as over the API. */
  audit: Audit;
}
