import { Task as SdkTaskCodec } from '@a2a-js/sdk';
import { type Engine, viewVersion } from '../../engine/engine.js';
import { toSdkTask } from './wire.js';

const MAX_ENTRIES = 10_000;

/**
 * v1.0 GetTask results, serialized once per version of the task. Agents poll tasks that mostly
 * have not changed: a poll then costs one read of the task's version (no event log, no decoding,
 * no protocol objects) instead of rebuilding the same JSON. Always checked against the store, so
 * it is never stale, also when other instances write. Bounded: the oldest entry goes first.
 */
export class TaskJsonCache {
  readonly #engine: Engine;
  readonly #entries = new Map<string, { version: string; json: string }>();

  constructor(engine: Engine) {
    this.#engine = engine;
  }

  /** `Task.toJSON` of the caller's task, as text; throws the engine's errors (not found...). */
  async get(owner: string, id: string, historyLength: number | undefined): Promise<string> {
    const key = historyLength === undefined ? id : `${id}\n${historyLength}`;
    const version = await this.#engine.version(owner, id);
    const cached = this.#entries.get(key);
    if (cached?.version === version) return cached.json;

    const view = await this.#engine.get(owner, id, historyLength);
    const json = JSON.stringify(SdkTaskCodec.toJSON(toSdkTask(view)));
    this.#entries.delete(key);
    this.#entries.set(key, { version: viewVersion(view.record), json });
    if (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    return json;
  }
}
