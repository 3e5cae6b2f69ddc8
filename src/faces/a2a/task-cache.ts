import { type Task as SdkTask, Task as SdkTaskCodec } from '@a2a-js/sdk';
import type { Engine } from '../../engine/engine.js';
import { viewVersion } from '../../engine/reads.js';
import { toSdkTask } from './wire.js';

/** A rendering larger than this share of the budget is answered but not kept. */
const MAX_ENTRY_SHARE = 8;

interface Entry {
  version: string;
  /** Shared by every caller of this version: read only (the transports only serialize it). */
  task: SdkTask;
  json: string;
}

/**
 * v1.0 GetTask results, made once per version of the task: the SDK's Task (for the gRPC and REST
 * transports to encode) and its JSON (for the JSON-RPC poll fast path). Agents poll tasks that
 * mostly have not changed: a poll then costs one read of the task's version (no event log, no
 * decoding, no protocol objects) instead of rebuilding the same answer. Always checked against the
 * store, so it is never stale, also when other instances write. Bounded by bytes (the JSON's UTF-16
 * code units, and as much again for the Task's objects): the oldest entry goes first.
 */
export class TaskCache {
  readonly #engine: Engine;
  readonly #entries = new Map<string, Entry>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(engine: Engine, maxBytes: number) {
    this.#engine = engine;
    this.#maxBytes = maxBytes;
  }

  /** `Task.toJSON` of the caller's task, as text; throws the engine's errors (not found...). */
  async json(owner: string, id: string, historyLength: number | undefined): Promise<string> {
    const key = keyOf(id, historyLength);
    // The hit is the poll's hot path: no async step on it beyond the version read.
    const hit = this.#hit(key, await this.#engine.version(owner, id));
    return (hit ?? (await this.#render(owner, id, historyLength, key))).json;
  }

  /** The caller's task as the SDK's transports take it; read only. Throws as {@link json}. */
  async task(owner: string, id: string, historyLength: number | undefined): Promise<SdkTask> {
    const key = keyOf(id, historyLength);
    const hit = this.#hit(key, await this.#engine.version(owner, id));
    return (hit ?? (await this.#render(owner, id, historyLength, key))).task;
  }

  #hit(key: string, version: string): Entry | undefined {
    const cached = this.#entries.get(key);
    return cached?.version === version ? cached : undefined;
  }

  /** Reads the task, renders it and keeps it (unless it is too large to keep). */
  async #render(owner: string, id: string, historyLength: number | undefined, key: string): Promise<Entry> {
    const view = await this.#engine.get(owner, id, historyLength);
    // Frozen: a transport that changed a shared Task would change every later caller's answer.
    const task = deepFreeze(toSdkTask(view));
    const entry = {
      version: viewVersion(view.record),
      task,
      json: JSON.stringify(SdkTaskCodec.toJSON(task)),
    };
    this.#forget(key);
    const size = entrySize(key, entry.json);
    if (size * MAX_ENTRY_SHARE > this.#maxBytes) return entry;
    this.#entries.set(key, entry);
    this.#bytes += size;
    for (const oldest of this.#entries.keys()) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#forget(oldest);
    }
    return entry;
  }

  #forget(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entrySize(key, entry.json);
  }
}

const keyOf = (id: string, historyLength: number | undefined): string =>
  historyLength === undefined ? id : `${id}\n${historyLength}`;

/** What an entry holds, in bytes: its JSON and about as much for the Task's objects, its key, the map's share. */
const entrySize = (key: string, json: string): number => 2 * key.length + 4 * json.length + 128;

/** Freezes a Task's objects and arrays; bytes (a raw part's Uint8Array) cannot be frozen and are left. */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value) || ArrayBuffer.isView(value))
    return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}
