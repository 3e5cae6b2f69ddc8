import { z } from 'zod';
import type { TaskView } from '../../engine/task.js';
import {
  IDEMPOTENCY_METADATA,
  type InFlightKeys,
  KEY_PATTERN,
  messageIdOf,
  payloadHash,
} from '../jobs/idempotency.js';
import type { Answer, Call } from './call.js';
import { acceptsStream, follow } from './follow.js';
import { CODE, invalidParams, paramsOf, RpcRefusal } from './jsonrpc.js';
import { needsTasksExtension } from './revision.js';
import { extensionTask, legacyTask } from './task-shape.js';

/**
 * `_meta` key of a tools/call's idempotency key: a retry with the same key (same caller, same tool
 * and arguments) returns the first call's task instead of starting a second job. It is the key
 * space of /v1/jobs' Idempotency-Key: one key, one task, whichever face the retry comes through.
 */
export const IDEMPOTENCY_META = 'taskhandle/idempotencyKey';

/** `_meta` key of a tools/call's priority among the caller's own tasks (docs/scheduling.md). */
export const PRIORITY_META = 'taskhandle/priority';

const CallParams = z.object({
  name: z.string().min(1).max(200),
  arguments: z.record(z.string(), z.unknown()).optional(),
  task: z.object({ ttl: z.number().optional() }).optional(),
  _meta: z
    .object({
      progressToken: z.union([z.string(), z.number()]).optional(),
      [IDEMPOTENCY_META]: z.string().regex(KEY_PATTERN, '1 to 255 visible ASCII characters').optional(),
      [PRIORITY_META]: z.number().int().optional(),
    })
    .optional(),
});

/**
 * `tools/call`: makes the skill's task and, once it is committed, answers with its handle (the
 * extension's CreateTaskResult, or 2025-11-25's `{task}` when the call asked for one); a plain
 * 2025-11-25 call is held open until the task ends. Under 2026-07-28 a client without the Tasks
 * extension is refused with -32021 before any task is made: every tool here is a job.
 */
export async function callTool(c: Call, inFlight: InFlightKeys): Promise<Answer> {
  const p = paramsOf(CallParams, c.params, '{"name": string, "arguments"?: object}');
  const skill = c.o.engine.skills.get(p.name);
  if (!skill || (c.policy.skills && !c.policy.skills.has(skill.id))) {
    throw invalidParams(`Unknown tool "${p.name}"; tools/list names the tools you may call`);
  }
  if (c.revision.kind === 'stateless' && !c.revision.tasksExtension) throw needsTasksExtension(p.name);
  // A call held open as a stream takes its slot first: past MAX_STREAMS nothing is made (-32600).
  const streamed = c.revision.kind !== 'stateless' && !p.task && acceptsStream(c);
  const slot = streamed ? c.o.engine.reserveStream(c.owner) : undefined;
  let view: Awaited<ReturnType<typeof submit>>;
  try {
    view = await submit(c, p.name, p.arguments ?? {}, p._meta, inFlight);
  } catch (err) {
    slot?.();
    throw err;
  }
  const { record } = view;
  if (c.revision.kind === 'stateless') return { resultType: 'task', ...extensionTask(record) };
  if (p.task) return { task: legacyTask(record) };
  return follow(c, record.id, { progressToken: p._meta?.progressToken, statusNotifications: false, slot });
}

async function submit(
  c: Call,
  skill: string,
  input: Record<string, unknown>,
  meta: z.infer<typeof CallParams>['_meta'],
  inFlight: InFlightKeys,
): Promise<TaskView> {
  const key = meta?.[IDEMPOTENCY_META];
  const hash = payloadHash({ skill, input });
  if (key !== undefined && !inFlight.take(c.owner, key)) {
    throw new RpcRefusal(
      CODE.invalidRequest,
      `A call with idempotency key "${key}" is still being answered; retry later`,
    );
  }
  try {
    const { view, created } = await c.o.engine.submit({
      owner: c.owner,
      skill,
      input,
      priority: meta?.[PRIORITY_META],
      key: key === undefined ? undefined : messageIdOf(key),
      metadata: key === undefined ? undefined : { [IDEMPOTENCY_METADATA]: { payloadHash: hash } },
      policy: c.policy,
    });
    if (created) c.o.audit('create', c.principal, view.record.id);
    else {
      const stored = view.record.metadata?.[IDEMPOTENCY_METADATA] as { payloadHash?: string } | undefined;
      if (stored?.payloadHash !== hash) {
        throw invalidParams(`Idempotency key "${key}" was used with another tool or other arguments`);
      }
    }
    return view;
  } finally {
    if (key !== undefined) inFlight.release(c.owner, key);
  }
}
