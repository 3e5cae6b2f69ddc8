import { EngineError } from './errors.js';
import type { PushConfig } from './push.js';
import type { TaskStore } from './store-port.js';
import type { TaskRecord } from './task.js';

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
  readonly #max: number;

  constructor(store: TaskStore, now: () => number, maxPerTask = Number.POSITIVE_INFINITY) {
    this.#store = store;
    this.#now = now;
    this.#max = maxPerTask;
  }

  /**
   * Adds or replaces (same id) a webhook of the caller's task. A task at MAX_PUSH_CONFIGS takes no
   * new one: each of its events goes to every webhook, so their number bounds what one write sets off.
   */
  async put(owner: string, taskId: string, config: NewPushConfig): Promise<PushConfig> {
    const record = await this.#owned(owner, taskId);
    const stored = pushConfigFor(taskId, config, this.#now());
    if (record.pushConfigs >= this.#max && !(await this.#store.getPushConfig(taskId, stored.id))) {
      throw new EngineError(
        'unsupported-operation',
        `Task ${taskId} has ${record.pushConfigs} push notification configs, the most it may have (MAX_PUSH_CONFIGS): delete one, or replace one by its id`,
      );
    }
    await this.#store.putPushConfig(stored);
    return stored;
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
