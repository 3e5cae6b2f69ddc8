import type { SkillRegistry } from '../../engine/registry.js';
import type { RemoteRuns } from '../../engine/remote-runs.js';
import type { Audit } from '../audit.js';
import type { FaceOptions } from '../http/admission.js';

/** What the /v1/workers face is built with. */
export interface WorkersOptions extends FaceOptions {
  runs: RemoteRuns;
  skills: SkillRegistry;
  audit: Audit;
  /** LEASE_MS: how long a claim holds its task without a heartbeat. */
  leaseMs: number;
  /**
   * The machine's user may work without a credential: an anonymous server on a loopback address
   * (where that user already owns every task).
   */
  localWorker: boolean;
}
