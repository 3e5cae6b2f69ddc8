import { EngineError } from './errors.js';

/**
 * The task streams each holder (a task's owner, or the operator who follows it) has open on this
 * instance, bounded so that one caller's streams cannot take the memory and sockets others need:
 * a stream past the bound is refused before anything is read. Per instance: behind a load balancer
 * a holder may have this many on each.
 */
export class StreamSlots {
  readonly #open = new Map<string, number>();
  readonly #max: number;

  /** `max`: streams one holder may have open at once; 0 for no bound. */
  constructor(max: number) {
    this.#max = max;
  }

  /** Takes a stream slot for `holder`; the returned function gives it back (once). */
  take(holder: string): () => void {
    const open = this.#open.get(holder) ?? 0;
    if (this.#max > 0 && open >= this.#max) {
      throw new EngineError(
        'too-many-streams',
        `You have ${open} streams open, the most allowed (MAX_STREAMS): close one, or poll (GetTask without currentGeneration: a waiting long poll counts as a stream) the tasks you follow least`,
      );
    }
    this.#open.set(holder, open + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.#open.get(holder) ?? 1) - 1;
      if (left > 0) this.#open.set(holder, left);
      else this.#open.delete(holder);
    };
  }
}
