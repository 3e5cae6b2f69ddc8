import { randomUUID } from 'node:crypto';
import type { ArtifactLink } from './artifacts.js';
import { EngineError } from './errors.js';
import type { ClaimPolicy } from './fair-share.js';
import type { Journal } from './journal.js';
import type { EngineLimits } from './limits.js';
import type { EngineObserver } from './observer.js';
import type { PushConfigs } from './push-configs.js';
import type { FullQueues, QueueCountsCache } from './queue-counts.js';
import type { SkillRegistry } from './registry.js';
import type { TooManyTasks } from './store-port.js';
import type { StreamSlots } from './stream-slots.js';
import type { Message } from './task.js';

/**
 * What the engine's commands, reads and streams share: the journal (store, hub, clock, write path)
 * and the engine's settings. Built once by {@link Engine}; never seen by callers.
 */
export interface EngineContext {
  journal: Journal;
  skills: SkillRegistry;
  /** The webhooks of callers' tasks. */
  push: PushConfigs;
  limits: EngineLimits;
  artifactUrl: ArtifactLink;
  /** Upper bound on any skill's ttlMs. */
  maxTtlMs: number;
  cancelGraceMs: number;
  newTaskId: (now: number) => string;
  /** Unfinished tasks an owner may have at once; 0 for no limit. */
  maxActiveTasks: number;
  /** The tenant an owner belongs to (its share of the runner slots: engine/fair-share.ts). */
  tenantOf: (owner: string) => string;
  priorities: Priorities;
  /** The limits of running tasks the runners claim under (queued tasks say which one holds them). */
  claimPolicy: ClaimPolicy;
  /** Queued tasks' standing counts, kept for a second (engine/queue.ts). */
  queueCounts: QueueCountsCache;
  /** Owners' queues counted full in the last second: a create behind one counts nothing. */
  fullQueues: FullQueues;
  /** Task streams open per holder, bounded (MAX_STREAMS). */
  streams: StreamSlots;
}

/** What callers may ask of their task's place in their own queue (docs/scheduling.md). */
export interface Priorities {
  /** A task's priority lies within [-max, max]; 0 is the default. */
  max: number;
  /** Each step of priority moves a task this much earlier in its owner's queue. */
  stepMs: number;
}

export const notFound = (id: string) => new EngineError('task-not-found', `Task ${id} not found`);

/** The store port's refusals, as the engine tells its callers (and its observer, when given). */
export async function storeRefusals<T>(work: Promise<T>, observer?: EngineObserver): Promise<T> {
  try {
    return await work;
  } catch (err) {
    const name = (err as { name?: unknown } | undefined)?.name;
    if (name === 'TooManyTasks') {
      observer?.refused('active-tasks');
      throw new EngineError(
        'too-many-tasks',
        `You have ${(err as TooManyTasks).active} unfinished tasks, the most allowed; wait for one to end`,
      );
    }
    if (name === 'InvalidPageToken') throw new EngineError('invalid-params', 'pageToken is not valid');
    throw err;
  }
}

/** An agent message with one text part, as status messages carry. */
export function agentText(taskId: string, contextId: string, text: string): Message {
  return { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }], taskId, contextId };
}

/** Refuses a message with more parts than the engine accepts. */
/**
 * Refuses task metadata past MAX_METADATA_BYTES (as JSON): it is kept in the task's record, which
 * every poll reads, so it stays small; large data belongs in the message's parts.
 */
export function refuseLargeMetadata(
  metadata: Record<string, unknown> | undefined,
  limits: EngineLimits,
): void {
  if (metadata === undefined || limits.maxMetadataBytes <= 0) return;
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes <= limits.maxMetadataBytes) return;
  throw new EngineError(
    'invalid-params',
    `metadata is ${bytes} bytes as JSON, more than the ${limits.maxMetadataBytes} a task keeps (MAX_METADATA_BYTES): send large data as the message's parts`,
  );
}

export function refuseManyParts(message: Message, limits: EngineLimits): void {
  if (message.parts.length <= limits.maxMessageParts) return;
  throw new EngineError(
    'invalid-params',
    `message.parts has ${message.parts.length} parts; at most ${limits.maxMessageParts} are accepted`,
  );
}
