import { notifiesByDefault } from '../../engine/push.js';
import type { Created, NewTask } from '../../engine/store-port.js';
import { json, newTaskRow, toRecord } from '../rows.js';
import { type CountsRow, toQueueCounts } from './counts.js';
import { createTask, type Inserted, notInserted } from './create-task.js';
import type { Db } from './db.js';
import { encode, logged, pushValues } from './params.js';
import { STATEMENTS as Q } from './statements.js';

/** One create's own outcome: a create of a batch fails alone. */
export type Settled = { ok: true; value: Created } | { ok: false; error: unknown };

const settle = (p: Promise<Created>): Promise<Settled> =>
  p.then(
    (value) => ({ ok: true, value }),
    (error: unknown) => ({ ok: false, error }),
  );

/**
 * The creates of one turn (turn-batch.ts), inserted by one statement (statements.ts, createTasks;
 * large ones by a few, see STATEMENT_BYTES): one round trip and one commit for all of them, each
 * answered as createTask answers it alone. A
 * create its statement did not make (its message id taken, its owner at or near its limit) goes on
 * as createTask goes on from its first attempt. A batch of one is createTask's own statement.
 *
 * The owner's limit holds as it does alone: createTask's count without a lock keeps `maxConnections`
 * below the limit because no statement in flight makes more than one task of an owner with a limit,
 * so a batch's statement takes one create of each such owner, and the others of that owner go alone.
 * A statement refused by the server (a constraint, a deadlock) wrote nothing: its creates are made
 * again one by one, so that the one at fault fails alone. A connection lost before the answer may
 * have committed: its creates fail, as one alone would.
 */
export async function createTasks(db: Db, maxConnections: number, tasks: NewTask[]): Promise<Settled[]> {
  const alone = (task: NewTask) => settle(createTask(db, maxConnections, task));
  if (tasks.length === 1) return [await alone(tasks[0] as NewTask)];
  const outcomes: Promise<Settled>[] = new Array(tasks.length);
  const batched: { task: NewTask; at: number }[] = [];
  const limited = new Set<string>();
  tasks.forEach((task, at) => {
    if (task.maxActive !== undefined) {
      if (limited.has(task.owner)) {
        outcomes[at] = alone(task);
        return;
      }
      limited.add(task.owner);
    }
    batched.push({ task, at });
  });
  const firsts = batched.length === 1 ? undefined : await insertMany(db, maxConnections, batched);
  batched.forEach(({ task, at }, i) => {
    const first = firsts?.[i];
    outcomes[at] =
      first instanceof Error ? Promise.resolve({ ok: false, error: first }) : attempt(task, first);
  });
  return Promise.all(outcomes);

  function attempt(task: NewTask, first: Inserted | undefined): Promise<Settled> {
    if (first?.kind === 'created') {
      const { result, counts } = first;
      return Promise.resolve({ ok: true, value: { result, created: true, ...(counts && { counts }) } });
    }
    return settle(createTask(db, maxConnections, task, first));
  }
}

interface Row extends CountsRow {
  ord: number;
  active: number;
  id: string | null;
}

/**
 * A statement's worth of text: a batch of large creates goes as several statements, each well
 * below what PostgreSQL takes in one message (1 GB) and what one statement should hold in memory.
 */
const STATEMENT_BYTES = 4 << 20;

/**
 * The batch's statements: each create's first attempt, in the batch's order; undefined for one to
 * make alone (its statement was refused, or held it alone), an Error for one that failed (its
 * event could not be encoded, or the connection was lost).
 */
async function insertMany(
  db: Db,
  slack: number,
  batch: readonly { task: NewTask }[],
): Promise<(Inserted | Error | undefined)[]> {
  const firsts: (Inserted | Error | undefined)[] = new Array(batch.length).fill(undefined);
  const statements = [new Params()];
  batch.forEach(({ task }, at) => {
    if ((statements.at(-1) as Params).bytes >= STATEMENT_BYTES) statements.push(new Params());
    const p = statements.at(-1) as Params;
    try {
      p.add(task, at);
    } catch (err) {
      firsts[at] = err instanceof Error ? err : new Error(String(err));
    }
  });
  await Promise.all(
    statements.map((p) => (p.sent.length < 2 ? undefined : insertSome(db, slack, p, firsts))),
  );
  return firsts;
}

/** One statement of a batch, its outcomes written into `firsts`. */
async function insertSome(
  db: Db,
  slack: number,
  p: Params,
  firsts: (Inserted | Error | undefined)[],
): Promise<void> {
  let rows: Row[];
  try {
    rows = await db.query<Row>(Q.createTasks, p.values(slack));
  } catch (err) {
    if (refusedByServer(err)) return;
    const failed = err instanceof Error ? err : new Error(String(err));
    for (const s of p.sent) firsts[s.at] = failed;
    return;
  }
  for (const r of rows) {
    const s = p.sent[r.ord - 1];
    if (!s) continue;
    const { task, at, configs } = s;
    if (r.id === null) {
      firsts[at] = notInserted(task.maxActive, r.active, slack);
      continue;
    }
    const row = { ...newTaskRow(task), push_configs: configs };
    const result = { record: toRecord(row), events: logged(row, 1, task.events) };
    firsts[at] = { kind: 'created', result, ...(r.ahead != null && { counts: toQueueCounts(r) }) };
  }
}

/** An error the server answered with (a SQLSTATE): the statement did not commit. */
const refusedByServer = (err: unknown): boolean =>
  typeof err === 'object' &&
  err !== null &&
  typeof (err as { code?: unknown }).code === 'string' &&
  /^[0-9A-Z]{5}$/.test((err as { code: string }).code) &&
  typeof (err as { severity?: unknown }).severity === 'string';

/** The batch statement's parameters, as columns: one array per column (see statements.ts createTasks). */
class Params {
  /** The creates added, in their statement's order, with their places in the batch. */
  readonly sent: { task: NewTask; at: number; configs: number }[] = [];
  /** About how much text the statement holds. */
  bytes = 0;
  readonly #tasks: unknown[][] = Array.from({ length: 20 }, () => []);
  readonly #events: unknown[][] = Array.from({ length: 5 }, () => []);
  readonly #configs: unknown[][] = Array.from({ length: 9 }, () => []);

  /** Adds the batch's `at`-th create. Throws, adding nothing, if an event cannot be encoded. */
  add(task: NewTask, at: number): void {
    const encoded = encode(task.events);
    const input = json(task.input);
    const metadata = json(task.metadata);
    const ord = this.sent.length + 1;
    // Given twice, a webhook id is the last one given (as one upsert after another leaves it).
    const configs = [...new Map((task.pushConfigs ?? []).map((c) => [c.id, c])).values()];
    push(this.#tasks, [
      task.id,
      task.contextId,
      task.owner,
      task.skill,
      input,
      metadata,
      task.createdAt,
      task.expiresAt,
      task.ttlMs,
      task.pollIntervalMs,
      task.messageId,
      task.maxActive ?? null,
      task.tenant ?? task.owner,
      task.priority ?? 0,
      task.queueAt ?? task.createdAt,
      task.trace?.traceparent ?? null,
      task.trace?.tracestate ?? null,
      task.events.length,
      configs.length,
      task.queueCap ?? null,
    ]);
    task.events.forEach((event, i) => {
      push(this.#events, [
        ord,
        i + 1,
        encoded.kinds[i],
        encoded.payloads[i],
        notifiesByDefault(event) ? 1 : 0,
      ]);
    });
    // A config's values as the one-task statement sends them, its task named by its place instead.
    for (const config of configs) push(this.#configs, [ord, ...pushValues(config).slice(1)]);
    this.sent.push({ task, at, configs: configs.length });
    this.bytes += (input?.length ?? 0) + (metadata?.length ?? 0) + encoded.payloads.join('').length;
  }

  values(slack: number): unknown[] {
    return [...this.#tasks, slack, ...this.#events, ...this.#configs];
  }
}

const push = (columns: unknown[][], values: unknown[]): void => {
  values.forEach((v, i) => {
    columns[i]?.push(v);
  });
};
