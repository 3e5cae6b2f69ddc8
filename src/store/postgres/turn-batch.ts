/**
 * Statements asked for in one turn of the event loop, sent to PostgreSQL as one: polls' stamp
 * reads and creates arrive many at a time, and each statement of its own costs a write to the
 * server's socket, a wake-up of its backend and a result to parse, which cost more than the read or
 * insert itself (measured: a poll's store read was two thirds socket writes). A batch waits for
 * nothing: it leaves at the end of the turn its first item was asked in (setImmediate), or at once
 * when it is full. A read of a batch is answered from one snapshot taken after it was asked, so none
 * can be staler than a read of its own; a create of a batch is committed before it is answered.
 */
export class TurnBatch<Q, R> {
  readonly #run: (items: Q[]) => Promise<R[]>;
  readonly #max: number;
  #pending: { item: Q; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];

  /**
   * `run` answers the items in their order, one result each; what it throws fails the whole batch
   * (a run whose items can fail alone answers each with its own outcome instead).
   */
  constructor(run: (items: Q[]) => Promise<R[]>, max = 256) {
    this.#run = run;
    this.#max = max;
  }

  add(item: Q): Promise<R> {
    return new Promise((resolve, reject) => {
      const n = this.#pending.push({ item, resolve, reject });
      if (n === 1) setImmediate(() => this.#flush());
      else if (n >= this.#max) this.#flush();
    });
  }

  #flush(): void {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    this.#run(batch.map((b) => b.item)).then(
      (results) => {
        batch.forEach((b, i) => {
          b.resolve(results[i] as R);
        });
      },
      (err: unknown) => {
        for (const b of batch) b.reject(err);
      },
    );
  }
}
