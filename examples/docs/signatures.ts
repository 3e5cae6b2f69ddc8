// The signatures api.md shows, each checked to be the one the package exports: a change to either
// fails the type-check here, naming the signature.
import type {
  createServer,
  defineRemoteSkill,
  defineSkill,
  JobError,
  RemoteSkill,
  ServerOptions,
  Skill,
  TaskServer,
} from 'taskhandle';

declare namespace Page {
  // #region createServer
  function createServer(options?: ServerOptions): Promise<TaskServer>;
  // #endregion createServer

  // #region defineSkill
  function defineSkill<I>(skill: Skill<I>): Skill<I>;
  // #endregion defineSkill

  // #region JobError
  class JobError extends Error {
    constructor(message: string, code?: string, options?: { transient?: boolean });
  }
  // #endregion JobError

  // #region defineRemoteSkill
  function defineRemoteSkill<I>(skill: Omit<RemoteSkill<I>, 'remote'>): RemoteSkill<I>;
  // #endregion defineRemoteSkill
}

/** true when A and B are the same type (not merely assignable one way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

export const createServerAsShown: Same<typeof Page.createServer, typeof createServer> = true;
export const defineSkillAsShown: Same<typeof Page.defineSkill, typeof defineSkill> = true;
// The page shows the constructor only: JobError's members (code, transient) are described in prose.
export const jobErrorAsShown: Same<
  ConstructorParameters<typeof Page.JobError>,
  ConstructorParameters<typeof JobError>
> = true;
export const defineRemoteSkillAsShown: Same<typeof Page.defineRemoteSkill, typeof defineRemoteSkill> = true;
