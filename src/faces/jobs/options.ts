import type { Engine } from '../../engine/engine.js';
import type { Audit } from '../audit.js';
import type { FaceOptions } from '../http/admission.js';

/** What the /v1/jobs face is built with. */
export interface JobsOptions extends FaceOptions {
  engine: Engine;
  audit: Audit;
  /** Skills only the extended card shows: the public OpenAPI document leaves them out. */
  extendedSkills: ReadonlySet<string>;
}
