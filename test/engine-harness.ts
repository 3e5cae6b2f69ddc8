import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Answered } from '../src/engine/answer.js';
import { composeEngine } from '../src/engine/compose.js';
import type { Engine, EngineOptions } from '../src/engine/engine.js';
import type { EventHub } from '../src/engine/events.js';
import type { CallerPolicy } from '../src/engine/grant.js';
import type { Journal } from '../src/engine/journal.js';
import type { EngineLimits } from '../src/engine/limits.js';
import type { EngineObserver } from '../src/engine/observer.js';
import { SkillRegistry } from '../src/engine/registry.js';
import { Runner, type RunnerOptions } from '../src/engine/runner.js';
import type { AnySkill } from '../src/engine/skill.js';
import type { Submitted } from '../src/engine/submit.js';
import type { Message, TaskRecord, TaskState } from '../src/engine/task.js';
import { skillCallOf } from '../src/faces/a2a/skill-call.js';
import { artifactPath } from '../src/faces/jobs/document.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';

export const logger = pino({ level: 'silent' });

export const OWNER = 'alice';

export interface HarnessOptions {
  skills: AnySkill[];
  defaultSkill?: string;
  cancelGraceMs?: number;
  maxTtlMs?: number;
  clock?: () => number;
  limits?: Partial<EngineLimits>;
  /** Hears what the engine does (the metrics tests). */
  observer?: EngineObserver;
  /** Engine settings beyond these (tenants, priorities, limits of running tasks). */
  engine?: Partial<Pick<EngineOptions, 'tenantOf' | 'priorities' | 'claimPolicy'>>;
}

/**
 * A real engine over a real SQLite file: store, hub, registry, engine, and runners started on
 * demand. `close()` stops the runners and closes the store.
 */
export interface Harness {
  path: string;
  store: SqliteStore;
  hub: EventHub;
  /** The engine's write path, as the runner sees it. */
  journal: Journal;
  engine: Engine;
  startRunner(options?: Partial<Omit<RunnerOptions, 'engine' | 'journal' | 'logger'>>): Runner;
  close(): Promise<void>;
}

export function harness(dir: string, o: HarnessOptions): Harness {
  const path = join(dir, 'tasks.db');
  const store = new SqliteStore({ path });
  const skills = new SkillRegistry(o.skills, o.defaultSkill ?? o.skills[0]?.id);
  const { hub, journal, engine } = composeEngine({
    store,
    clock: o.clock,
    observer: o.observer,
    skills,
    maxTtlMs: o.maxTtlMs ?? 86_400_000,
    limits: o.limits,
    cancelGraceMs: o.cancelGraceMs ?? 10_000,
    artifactUrl: artifactPath,
    ...o.engine,
  });
  const runners: Runner[] = [];
  return {
    path,
    store,
    hub,
    journal,
    engine,
    startRunner(options = {}) {
      const runner = startRunner({ engine, journal }, options);
      runners.push(runner);
      return runner;
    },
    async close() {
      await Promise.all(runners.map((r) => r.stop(100)));
      await store.close();
    },
  };
}

/** A started runner of `engine` with test-friendly defaults (short polls, a 5 s lease); stop it yourself. */
export function startRunner(
  { engine, journal }: { engine: Engine; journal: Journal },
  options: Partial<Omit<RunnerOptions, 'engine' | 'journal' | 'logger'>> = {},
): Runner {
  const runner = new Runner({
    engine,
    journal,
    workerId: `test-${randomUUID().slice(0, 8)}`,
    concurrency: 4,
    leaseMs: 5000,
    pollMs: 20,
    maxInterruptions: 3,
    logger,
    ...options,
  });
  runner.start();
  return runner;
}

export const text = (t: string, extra: Partial<Message> = {}): Message => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text: t }],
  ...extra,
});

/** A message that picks `skill` with `input` through a data part. */
export const call = (skill: string, input: unknown, extra: Partial<Message> = {}): Message => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ data: { skill, input } }],
  ...extra,
});

/** Submits a new task as the A2A face does for `message` (its skill, input, key and context). */
export function submitted(
  engine: Engine,
  message: Message,
  owner = OWNER,
  metadata?: Record<string, unknown>,
): Promise<Submitted> {
  const { skill, input } = skillCallOf(message, engine.skills);
  return engine.submit({
    owner,
    skill,
    input,
    message,
    key: message.messageId,
    contextId: message.contextId,
    metadata,
  });
}

/** Sends a message that must create a task; returns the task id. */
export async function submit(engine: Engine, message: Message, owner = OWNER): Promise<string> {
  return (await submitted(engine, message, owner)).view.record.id;
}

/** Gives task `taskId` a message from `owner` (an approver when `policy` names one). */
export const answer = (
  engine: Engine,
  taskId: string,
  message: Message,
  owner = OWNER,
  policy?: CallerPolicy,
): Promise<Answered> => engine.answer({ owner, taskId, message, policy });

/** Waits until the task (of any owner) is in `state`; fails naming the state it is stuck in. */
export async function waitForState(
  engine: Engine,
  id: string,
  state: TaskState,
  timeoutMs = 5000,
): Promise<TaskRecord> {
  const last = await engine.waitUntil(id, (s) => s === state, timeoutMs);
  if (last.state !== state)
    throw new Error(`timed out waiting for task ${id} to be ${state} (it is ${last.state})`);
  return last;
}

/** The text of a message's parts (status messages carry one text part). */
export const textOf = (m: Message | undefined): string => m?.parts.map((p) => p.text ?? '').join('') ?? '';

/** Rejects with what `fn` throws, or fails when it does not throw. */
export async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

/** The text of the task's artifact named `name`, read as a file (inline or stored out of the log). */
export async function artifactText(engine: Engine, id: string, name: string, owner = OWNER): Promise<string> {
  const artifact = (await engine.get(owner, id)).artifacts.find((a) => a.name === name);
  if (!artifact) return '';
  const file = await engine.artifactFile(owner, id, artifact.artifactId);
  const pieces: Buffer[] = [];
  for await (const piece of file.read()) pieces.push(piece);
  return Buffer.concat(pieces).toString();
}
