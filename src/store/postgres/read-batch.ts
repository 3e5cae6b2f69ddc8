/**
 * Reads asked for in one turn of the event loop, sent to PostgreSQL as one statement. Polls arrive
 * many at a time; each statement of its own costs a write to the server's socket, a wake-up of its
 * backend and a result to parse, which cost more than the read itself (measured: a poll's store
 * read was two thirds socket writes). A batch waits for nothing: it leaves at the end of the turn
 * its first read was asked in (setImmediate), or at once when it is full. Every read of a batch is
 * answered from one snapshot taken after it was asked, so none can be staler than a read of its own.
 */
export class ReadBatch<Q, R> {
  readonly #run: (queries: Q[]) => Promise<R[]>;
  readonly #max: number;
  #pending: { query: Q; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];

  /** `run` answers the queries in their order, one result each. */
  constructor(run: (queries: Q[]) => Promise<R[]>, max = 256) {
    this.#run = run;
    this.#max = max;
  }

  read(query: Q): Promise<R> {
    return new Promise((resolve, reject) => {
      const n = this.#pending.push({ query, resolve, reject });
      if (n === 1) setImmediate(() => this.#flush());
      else if (n >= this.#max) this.#flush();
    });
  }

  #flush(): void {
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    this.#run(batch.map((b) => b.query)).then(
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
