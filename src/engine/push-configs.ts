import { EngineError } from './errors.js';
import type { EngineLimits } from './limits.js';
import type { PushConfig } from './push.js';
import type { TaskStore } from './store-port.js';
import { isTerminal, type TaskRecord } from './task.js';

/** A webhook as a caller registers it: the task and time are filled in, the id when absent. */
export type NewPushConfig = Omit<PushConfig, 'taskId' | 'createdAt' | 'id'> & { id?: string };

/**
 * The id of a webhook registered without one: each task has one default webhook, which a second
 * registration without an id replaces (as v0.3 clients, which knew one config per task, expect).
 */
export const DEFAULT_CONFIG_ID = 'default';

/** Completes a caller's webhook for a task. */
export const pushConfigFor = (taskId: string, c: NewPushConfig, createdAt: number): PushConfig => ({
  ...c,
  id: c.id || DEFAULT_CONFIG_ID,
  taskId,
  createdAt,
});

/**
 * The webhooks of a caller's tasks. Every operation first checks that the task is the caller's:
 * someone else's task is "not found", exactly like a task that does not exist.
 */
export class PushConfigs {
  readonly #store: TaskStore;
  readonly #now: () => number;
  readonly #max: { perTask: number; active: number };

  constructor(
    store: TaskStore,
    now: () => number,
    max: Pick<EngineLimits, 'maxPushConfigs' | 'maxActivePushConfigs'>,
  ) {
    this.#store = store;
    this.#now = now;
    this.#max = { perTask: max.maxPushConfigs, active: max.maxActivePushConfigs };
  }

  /**
   * Adds or replaces (same id) a webhook of the caller's task. Each event of a task goes to every
   * webhook it has, so a new one is refused past MAX_PUSH_CONFIGS on the task, and past
   * MAX_ACTIVE_PUSH_CONFIGS over the owner's unfinished tasks: what one caller's writes set off
   * stays bounded, and so does its share of the deliveries.
   */
  async put(owner: string, taskId: string, config: NewPushConfig): Promise<PushConfig> {
    const record = await this.#owned(owner, taskId);
    const stored = pushConfigFor(taskId, config, this.#now());
    if (
      this.#max.active > 0 &&
      !isTerminal(record.state) &&
      !(await this.#store.getPushConfig(taskId, stored.id))
    )
      await this.refuseManyActive(owner);
    // The per-task bound is checked in the store's own transaction: concurrent puts cannot pass it together.
    if (
      !(await this.#store.putPushConfig(
        stored,
        Number.isFinite(this.#max.perTask) ? this.#max.perTask : undefined,
      ))
    ) {
      throw new EngineError(
        'unsupported-operation',
        `Task ${taskId} has ${this.#max.perTask} push notification configs, the most it may have (MAX_PUSH_CONFIGS): delete one, or replace one by its id`,
      );
    }
    return stored;
  }

  /** Refuses one more webhook for `owner` when its unfinished tasks have MAX_ACTIVE_PUSH_CONFIGS already. */
  async refuseManyActive(owner: string): Promise<void> {
    if (this.#max.active <= 0) return;
    const n = await this.#store.countActivePushConfigs(owner, this.#now());
    if (n < this.#max.active) return;
    throw new EngineError(
      'unsupported-operation',
      `Your unfinished tasks have ${n} push notification configs, the most allowed (MAX_ACTIVE_PUSH_CONFIGS): delete ones you no longer need, let tasks finish, or poll instead`,
    );
  }

  async get(owner: string, taskId: string, id: string): Promise<PushConfig> {
    await this.#owned(owner, taskId);
    const config = await this.#store.getPushConfig(taskId, id);
    if (!config)
      throw new EngineError('task-not-found', `Task ${taskId} has no push notification config ${id}`);
    return config;
  }

  async list(owner: string, taskId: string): Promise<PushConfig[]> {
    await this.#owned(owner, taskId);
    return this.#store.listPushConfigs(taskId);
  }

  /** Idempotent: deleting a config that is not there (any more) succeeds. */
  async delete(owner: string, taskId: string, id: string): Promise<void> {
    await this.#owned(owner, taskId);
    await this.#store.deletePushConfig(taskId, id);
  }

  async #owned(owner: string, taskId: string): Promise<TaskRecord> {
    const record = await this.#store.getTask(taskId, this.#now());
    if (!record || record.owner !== owner)
      throw new EngineError('task-not-found', `Task ${taskId} not found`);
    return record;
  }
}
