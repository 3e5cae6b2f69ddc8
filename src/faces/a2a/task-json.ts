import { Task as SdkTaskCodec } from '@a2a-js/sdk';
import type { Engine } from '../../engine/engine.js';
import { viewVersion } from '../../engine/reads.js';
import { toSdkTask } from './wire.js';

/** A rendering larger than this share of the budget is answered but not kept. */
const MAX_ENTRY_SHARE = 8;

/**
 * v1.0 GetTask results, serialized once per version of the task. Agents poll tasks that mostly
 * have not changed: a poll then costs one read of the task's version (no event log, no decoding,
 * no protocol objects) instead of rebuilding the same JSON. Always checked against the store, so
 * it is never stale, also when other instances write. Bounded by bytes (UTF-16 code units, as
 * the strings are held): the oldest entry goes first.
 */
export class TaskJsonCache {
  readonly #engine: Engine;
  readonly #entries = new Map<string, { version: string; json: string }>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(engine: Engine, maxBytes: number) {
    this.#engine = engine;
    this.#maxBytes = maxBytes;
  }

  /** `Task.toJSON` of the caller's task, as text; throws the engine's errors (not found...). */
  async get(owner: string, id: string, historyLength: number | undefined): Promise<string> {
    const key = historyLength === undefined ? id : `${id}\n${historyLength}`;
    const version = await this.#engine.version(owner, id);
    const cached = this.#entries.get(key);
    if (cached?.version === version) return cached.json;

    const view = await this.#engine.get(owner, id, historyLength);
    const json = JSON.stringify(SdkTaskCodec.toJSON(toSdkTask(view)));
    this.#forget(key);
    const size = entrySize(key, json);
    if (size * MAX_ENTRY_SHARE > this.#maxBytes) return json;
    this.#entries.set(key, { version: viewVersion(view.record), json });
    this.#bytes += size;
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#forget(oldest);
    }
    return json;
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entrySize(key, entry.json);
  }
}

/** What an entry holds, in bytes (two per UTF-16 code unit, plus its version and the map's share). */
const entrySize = (key: string, json: string): number => 2 * (key.length + json.length) + 128;
