/**
 * taskhandle as a library: long-running work behind durable task handles, served over A2A
 * (JSON-RPC, REST, gRPC), MCP and plain HTTP. Everything a user builds on is exported here, and
 * nothing else is public (docs/api.md; the API report in etc/taskhandle.api.md moves only on purpose).
 *
 * @example
 * import { createServer, defineSkill } from 'taskhandle';
 * import { z } from 'zod';
 *
 * const report = defineSkill({
 *   id: 'report', description: 'Builds the monthly report', input: z.object({ month: z.string() }),
 *   pollIntervalMs: 2000, ttlMs: 86_400_000, onInterrupt: 'rerun',
 *   async run(ctx) {
 *     await ctx.progress({ percent: 50, message: 'counting' });
 *     return { message: `Report for ${ctx.input.month} is ready` };
 *   },
 * });
 * const server = await createServer({ skills: [report], port: 0 });
 *
 * @packageDocumentation
 */

export { ConfigError } from './config/error.js';
export type { DatabaseUrl, Settings } from './config/settings-options.js';
export { JobError } from './engine/errors.js';
export {
  type AbortReason,
  type Answer,
  type ArtifactUpdate,
  defineRemoteSkill,
  defineSkill,
  type InputRequest,
  type InterruptPolicy,
  type JsonSchema,
  type RemoteSkill,
  type RetryPolicy,
  type Skill,
  type SkillBase,
  type SkillContext,
  type SkillOutcome,
} from './engine/skill.js';
export type { BlobRef, Message, Part, Role } from './engine/task.js';
export { createServer, type ServerOptions, type TaskServer } from './server/create.js';
