import { randomUUID } from 'node:crypto';
import { ATTR, activeCarrier, inSpan, type Span } from '../telemetry/tracing.js';
import {
  type EngineContext,
  type Priorities,
  refuseLargeMetadata,
  refuseManyParts,
  storeRefusals,
} from './context.js';
import { EngineError } from './errors.js';
import type { CallerPolicy } from './grant.js';
import { type NewPushConfig, pushConfigFor } from './push-configs.js';
import { AHEAD_COUNT_CAP, withCounts } from './queue.js';
import { get } from './reads.js';
import type { Message, TaskView } from './task.js';
import { foldView } from './view.js';

/** A new task: the skill and input the caller chose, and how the caller wants it kept. */
export interface Submission {
  owner: string;
  /** The skill's id. */
  skill: string;
  /** The skill's input as the caller gave it: validated by the skill's schema here. */
  input: unknown;
  /**
   * Makes the submission idempotent: another submission with the same owner and key returns the
   * task the first one made and changes nothing. Default: the message's messageId, or none.
   */
  key?: string;
  /**
   * What the caller said, recorded as the task's first message (A2A: the message as sent). Default:
   * a user message whose one data part is `{skill, input}`.
   */
  message?: Message;
  /** The conversation the task joins; default: a new one. */
  contextId?: string;
  /** The caller's own data, kept with the task and shown to its owner. */
  metadata?: Record<string, unknown>;
  /** A webhook registered with the task, in the same transaction. */
  push?: NewPushConfig;
  policy?: CallerPolicy;
  /**
   * Its place in the caller's own queue: higher runs sooner, among the caller's tasks only (an
   * integer within the server's bounds, default 0). See docs/scheduling.md.
   */
  priority?: unknown;
}

export interface Submitted {
  view: TaskView;
  /** False when the key had already made this task (a retry). */
  created: boolean;
}

/**
 * Creates the task a caller asked for and queues it; see {@link Submission}. Traced as `create_task`,
 * whose context the task keeps: its job runs start traces of their own that link back to it.
 */
export function submit(core: EngineContext, s: Submission): Promise<Submitted> {
  return inSpan('create_task', { attributes: { [ATTR.skill]: s.skill } }, (span) => create(core, s, span));
}

async function create(core: EngineContext, s: Submission, span: Span): Promise<Submitted> {
  const { journal } = core;
  if (s.message) refuseManyParts(s.message, core.limits);
  refuseLargeMetadata(s.metadata, core.limits);
  const priority = priorityOf(s.priority, core.priorities);
  const skill = core.skills.use(s.skill, s.policy);
  const input = core.skills.parseInput(skill, s.input);
  if (s.push) await core.push.refuseManyActive(s.owner);
  const now = journal.now();
  const id = core.newTaskId(now);
  const contextId = s.contextId || randomUUID();
  const ttlMs = Math.min(skill.ttlMs, core.maxTtlMs);
  const said: Message = s.message ?? {
    messageId: '',
    role: 'ROLE_USER',
    parts: [{ data: { skill: s.skill, input: s.input ?? {} } }],
  };
  const messageId = s.key ?? (s.message?.messageId || randomUUID());
  const first: Message = { ...said, messageId, taskId: id, contextId };
  // No lookup of the key first: createTask answers a retry with the task it made, in the same
  // transaction (an expired one, not swept yet, no longer counts: the retry makes a new task).
  const queueAt = now - priority * core.priorities.stepMs;
  // Behind a queue known full, the counts are known too: the create reads none (queue-counts.ts).
  const known = core.fullQueues.countsAt(s.owner, skill.id, queueAt, now);
  const started = performance.now();
  const { result, created, counts } = await storeRefusals(
    journal.store.createTask({
      id,
      contextId,
      owner: s.owner,
      tenant: core.tenantOf(s.owner),
      priority,
      // A priority moves the task earlier in its owner's queue only: it ages past a later task of
      // higher priority once it waited their difference in steps (no starvation within an owner).
      queueAt,
      skill: skill.id,
      input,
      metadata: s.metadata,
      createdAt: now,
      expiresAt: now + ttlMs,
      ttlMs,
      pollIntervalMs: skill.pollIntervalMs,
      messageId,
      pushConfigs: s.push && [pushConfigFor(id, s.push, now)],
      maxActive: core.maxActiveTasks || undefined,
      trace: activeCarrier(),
      // Where the new task stands, counted in its own transaction: its answer shows it, as a poll does.
      queueCap: known ? undefined : AHEAD_COUNT_CAP,
      events: [
        { kind: 'message', message: first },
        { kind: 'status', state: 'submitted' },
      ],
    }),
    journal.observer,
  );
  journal.observer.stored('create', performance.now() - started);
  span.setAttributes({
    [ATTR.taskId]: result.record.id,
    [ATTR.conversation]: result.record.contextId,
    'taskhandle.created': created,
  });
  if (!created) return { view: await get(core, s.owner, result.record.id), created };
  journal.publish(result);
  journal.observer.created(skill.id);
  journal.queued();
  // The write returned the whole new task: no need to read it back.
  if (counts) core.fullQueues.counted(s.owner, skill.id, queueAt, counts, now);
  const record = withCounts(core, result.record, counts ?? known, now);
  return { view: foldView(record, result.events, undefined, core.artifactUrl), created };
}

/** The caller's priority, checked against the server's bounds. */
function priorityOf(priority: unknown, bounds: Priorities): number {
  if (priority === undefined) return 0;
  if (typeof priority === 'number' && Number.isInteger(priority) && Math.abs(priority) <= bounds.max) {
    return priority;
  }
  throw new EngineError(
    'invalid-params',
    `priority must be an integer from -${bounds.max} to ${bounds.max} (higher runs sooner among your own tasks); got ${String(priority).slice(0, 40)}`,
  );
}
