import { Engine, type EngineOptions } from './engine.js';
import { EventHub } from './events.js';
import { Journal } from './journal.js';
import type { EngineObserver } from './observer.js';
import type { TaskStore } from './store-port.js';

/** An engine over a store: the hub streams wait on, the write path runners write through, the engine. */
export interface ComposedEngine {
  hub: EventHub;
  journal: Journal;
  engine: Engine;
}

export interface ComposeOptions extends Omit<EngineOptions, 'journal'> {
  store: TaskStore;
  /** The engine's clock (default Date.now): tests move it. */
  clock?: () => number;
  /** Hears what the engine does (metrics). */
  observer?: EngineObserver;
}

/**
 * The one place the engine is put together over a store (EventHub -> Journal -> Engine): the server
 * (server/backend.ts), the engine's tests and the in-process probes of perf/ all build it here, then
 * start the runners they need over `journal`.
 *
 * @example const { engine, journal } = composeEngine({ store, skills, maxTtlMs, cancelGraceMs: 5000, artifactUrl });
 */
export function composeEngine(o: ComposeOptions): ComposedEngine {
  const { store, clock, observer, ...options } = o;
  const hub = new EventHub();
  const journal = new Journal({ store, hub, clock, observer });
  return { hub, journal, engine: new Engine({ journal, ...options }) };
}
