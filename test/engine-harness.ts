import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach } from 'vitest';
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
import type { TaskStore } from '../src/engine/store-port.js';
import type { Submitted } from '../src/engine/submit.js';
import type { Message, TaskRecord, TaskState } from '../src/engine/task.js';
import { skillCallOf } from '../src/faces/a2a/skill-call.js';
import { artifactPath } from '../src/faces/jobs/document.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { tempDirs } from './helpers.js';
import { type TestSkills, testSkills } from './test-skills.js';

export const logger = pino({ level: 'silent' });

export const OWNER = 'alice';

/** How a test starts a runner: the runner's options beyond its engine, journal and logger. */
export type RunnerStart = Partial<Omit<RunnerOptions, 'engine' | 'journal' | 'logger'>>;

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
  /** Starts a runner with these options (`{}`: the defaults) as soon as the engine is composed. */
  runner?: RunnerStart;
}

/**
 * A real engine over a real store: hub, registry, engine, and runners started on demand. `close()`
 * stops the runners and closes the store; closing again does nothing more.
 */
export interface Harness<S extends TaskStore = SqliteStore> {
  store: S;
  hub: EventHub;
  /** The engine's write path, as the runner sees it. */
  journal: Journal;
  engine: Engine;
  startRunner(options?: RunnerStart): Runner;
  close(): Promise<void>;
}

/** The engine composed over `store` as the server composes it, with test-friendly defaults. */
export function harnessOver<S extends TaskStore>(store: S, o: HarnessOptions): Harness<S> {
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
  let closed: Promise<void> | undefined;
  const opened: Harness<S> = {
    store,
    hub,
    journal,
    engine,
    startRunner(options = {}) {
      // Test-friendly defaults: short polls, a 5 s lease.
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
      runners.push(runner);
      return runner;
    },
    close() {
      closed ??= (async () => {
        await Promise.all(runners.map((r) => r.stop(100)));
        await store.close();
      })();
      return closed;
    },
  };
  if (o.runner) opened.startRunner(o.runner);
  return opened;
}

/** What {@link harnessEach} gives a test file. */
export interface EachTest {
  /** The running test's harness: the one opened before it, or the one `open` opened last. */
  readonly h: Harness;
  /** The running test's skills of test/test-skills.ts, a fresh set for each test. */
  readonly t: TestSkills;
  /** Opens the running test's harness (`h` from now on) in a fresh directory, or again in `dir`. */
  open(options: HarnessOptions, dir?: string): Harness;
  /** A harness beside `h` for this test alone, closed after it with `h`. */
  another(options: HarnessOptions): Harness;
  /** A fresh directory, removed after the file's last test. */
  dir(): string;
}

/**
 * The setup of a file of engine tests: before each test fresh test skills and (given `options`) a
 * harness over them in a directory of its own; after it, the skills' gates let go and every harness
 * of the test closed; after the file, its directories removed. `h` and `t` stand for the running
 * test's, so a file declares them once: `const { h, t } = harnessEach((t) => ({ skills: t.skills }))`.
 * The file's own hooks, declared after this call, run after the harness opens and before it closes.
 */
export function harnessEach(options?: (t: TestSkills) => HarnessOptions): EachTest {
  const dirs = tempDirs();
  let skills: TestSkills | undefined;
  let current: Harness | undefined;
  const opened: Harness[] = [];
  const another = (o: HarnessOptions, dir = dirs.make()): Harness => {
    const h = harnessOver(new SqliteStore({ path: join(dir, 'tasks.db') }), o);
    opened.push(h);
    return h;
  };
  const open = (o: HarnessOptions, dir?: string): Harness => {
    current = another(o, dir);
    return current;
  };
  beforeEach(() => {
    skills = testSkills();
    if (options) open(options(skills));
  });
  afterEach(async () => {
    // Jobs held at a gate end now, so that stopping the runners waits for none of them.
    skills?.stubbornGate.resolve();
    skills?.shortGate.resolve();
    await Promise.all(opened.splice(0).map((h) => h.close()));
    current = undefined;
  });
  return {
    h: runningTests(() => current, 'no harness is open: give harnessEach its options, or call open() first'),
    t: runningTests(() => skills, 'the test skills exist only while a test runs'),
    open,
    another: (o) => another(o),
    dir: () => dirs.make(),
  };
}

/** An object that reads and writes through to what `get` returns when it is used (the running test's). */
function runningTests<T extends object>(get: () => T | undefined, missing: string): T {
  const of = (): T => {
    const value = get();
    if (value === undefined) throw new Error(missing);
    return value;
  };
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(of(), key),
    set: (_, key, value) => Reflect.set(of(), key, value),
  });
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
