import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { z } from 'zod';
import { isJobError, JobError } from '../engine/errors.js';
import { type AnySkill, defineSkill, type SkillContext, type SkillOutcome } from '../engine/skill.js';

/**
 * What processing one item of a batch means. `input` validates each item when the request comes
 * in (a bad item refuses the whole request before a task exists); `run` gets the parsed item and a
 * signal that aborts when the batch stops (cancel, shutdown, stopOnError). Operations must be pure:
 * an interrupted batch is simply run again from the start.
 *
 * @example
 * const upper = defineOperation({
 *   description: 'Upper-cases a string',
 *   input: z.string(),
 *   async run(item) { return item.toUpperCase(); },
 * });
 */
export interface BatchOperation<T = unknown> {
  description: string;
  input: z.ZodType<T>;
  /**
   * The item's result; must serialize to JSON. A throw (or rejection) fails this item only: a
   * JobError's message is the item's error, anything else (a bug) reads as an unexpected failure.
   */
  run(item: T, signal: AbortSignal): Promise<unknown>;
}

export const defineOperation = <T>(operation: BatchOperation<T>): BatchOperation<T> => operation;

const Digest = z.enum(['sha256', 'sha512', 'sha1', 'md5']).default('sha256');

/** A JSON value's path: `a.b.0` (own properties and array indexes only). */
function pick(value: unknown, path: string): { found: boolean; value?: unknown } {
  let at = value;
  for (const key of path.split('.')) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, key)) return { found: false };
    at = (at as Record<string, unknown>)[key];
  }
  return { found: true, value: at };
}

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';
/** The subset of JSON Schema the `validate` operation knows; any other keyword is refused. */
interface JsonSchema {
  type?: JsonType;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}
const JsonSchemaInput: z.ZodType<JsonSchema> = z.lazy(() =>
  z.strictObject({
    type: z.enum(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']).optional(),
    enum: z.array(z.unknown()).optional(),
    required: z.array(z.string()).optional(),
    properties: z.record(z.string(), JsonSchemaInput).optional(),
    additionalProperties: z.boolean().optional(),
    items: JsonSchemaInput.optional(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    minLength: z.number().int().min(0).optional(),
    maxLength: z.number().int().min(0).optional(),
  }),
);

const typeOf = (v: unknown): JsonType =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : (typeof v as JsonType);

/** Appends to `errors` what is wrong with `value` at `path` (JSON values; enum compared as JSON). */
function check(value: unknown, schema: JsonSchema, path: string, errors: string[]): void {
  const type = typeOf(value);
  if (schema.type && !(schema.type === type || (schema.type === 'integer' && Number.isInteger(value)))) {
    errors.push(`${path}: expected ${schema.type}, got ${type}`);
    return;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    errors.push(`${path}: not one of ${JSON.stringify(schema.enum)}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      errors.push(`${path}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      errors.push(`${path}: above ${schema.maximum}`);
  }
  if (typeof value === 'string' || Array.isArray(value)) {
    const { length } = value;
    if (schema.minLength !== undefined && length < schema.minLength)
      errors.push(`${path}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      errors.push(`${path}: longer than ${schema.maxLength}`);
  }
  if (Array.isArray(value) && schema.items) {
    for (const [i, v] of value.entries()) check(v, schema.items, `${path}[${i}]`, errors);
  }
  if (type === 'object') {
    const object = value as Record<string, unknown>;
    for (const key of schema.required ?? [])
      if (!Object.hasOwn(object, key)) errors.push(`${path}.${key}: required`);
    for (const [key, v] of Object.entries(object)) {
      const sub =
        schema.properties && Object.hasOwn(schema.properties, key) ? schema.properties[key] : undefined;
      if (sub) check(v, sub, `${path}.${key}`, errors);
      else if (schema.additionalProperties === false) errors.push(`${path}.${key}: not allowed`);
    }
  }
}

/** Local, pure operations the server ships: no network, no file system, safe to re-run. */
export const BUILTIN_OPERATIONS: Record<string, BatchOperation> = {
  checksum: defineOperation({
    description: 'hashes {text} (UTF-8) or {base64} bytes: {algorithm, digest (hex), bytes}',
    input: z
      .strictObject({ text: z.string().optional(), base64: z.base64().optional(), algorithm: Digest })
      .refine((i) => (i.text === undefined) !== (i.base64 === undefined), 'give exactly one of text, base64'),
    async run(item) {
      const bytes =
        item.text !== undefined ? Buffer.from(item.text) : Buffer.from(item.base64 ?? '', 'base64');
      const digest = createHash(item.algorithm).update(bytes).digest('hex');
      return { algorithm: item.algorithm, digest, bytes: bytes.length };
    },
  }),
  transform: defineOperation({
    description:
      'picks and renames fields of {value}: {fields: {newName: "path.in.value"}}; a missing path fails the item',
    input: z.strictObject({
      value: z.record(z.string(), z.unknown()),
      fields: z.record(z.string(), z.string().min(1)).refine((f) => Object.keys(f).length > 0, 'no fields'),
    }),
    async run(item) {
      const out: Record<string, unknown> = {};
      for (const [name, path] of Object.entries(item.fields)) {
        const found = pick(item.value, path);
        if (!found.found) throw new JobError(`missing field "${path}"`);
        out[name] = found.value;
      }
      return out;
    },
  }),
  validate: defineOperation({
    description:
      'checks {value} against {schema} (JSON Schema subset: type, enum, required, properties, additionalProperties, items, minimum, maximum, minLength, maxLength): {valid, errors}',
    input: z.strictObject({ value: z.unknown(), schema: JsonSchemaInput }),
    async run(item) {
      const errors: string[] = [];
      check(item.value, item.schema, '$', errors);
      return { valid: errors.length === 0, errors: errors.slice(0, 20) };
    },
  }),
};

export const MAX_ITEMS = 10_000;
/** Results per artifact chunk; a slow batch also writes what it has every FLUSH_MS. */
const CHUNK_ITEMS = 500;
const FLUSH_MS = 1000;

const Request = z.strictObject({
  operation: z.string().min(1),
  items: z.array(z.unknown()).min(1).max(MAX_ITEMS),
  concurrency: z.number().int().min(1).max(32).default(4),
  stopOnError: z.boolean().default(false),
});
type BatchInput = z.output<typeof Request>;

/**
 * The `batch` skill: runs one operation over a list of items with bounded concurrency, reports
 * progress ("k of n done, f failed"), and streams per-item results as the NDJSON artifact
 * `results.ndjson` (lines `{index, ok: true, result}` / `{index, ok: false, error}`, in index
 * order, appended in chunks), then a `summary.json` artifact whose metadata carries `partial`.
 *
 * Outcome: all items ok → completed "n items done"; some failed → completed "k of n items failed
 * (see results)" with `partial: true` (the batch did its job; the caller reads which items
 * failed); every item failed, or stopOnError hit a failure → failed (nothing useful came of it, or
 * the caller asked for all-or-nothing). Items never started, or aborted by the stop, are left out
 * of the results and counted as `skipped` in the summary.
 *
 * @example
 * {"skill":"batch","input":{"operation":"checksum","items":[{"text":"a"},{"base64":"Yg=="}]}}
 */
export function batchSkill(operations: Record<string, BatchOperation> = BUILTIN_OPERATIONS): AnySkill {
  const names = Object.keys(operations);
  const lookup = (name: string) => (Object.hasOwn(operations, name) ? operations[name] : undefined);
  const input = Request.superRefine((req, issues) => {
    const op = lookup(req.operation);
    if (!op) {
      const message = `unknown operation "${req.operation}"; this agent offers: ${names.join(', ')}`;
      issues.addIssue({ code: 'custom', path: ['operation'], message });
      return;
    }
    for (const [i, item] of req.items.entries()) {
      const parsed = op.input.safeParse(item);
      if (parsed.success) continue;
      const issue = parsed.error.issues[0];
      // One precise error (the first bad item) rather than up to 10,000 of them.
      issues.addIssue({
        code: 'custom',
        path: ['items', i, ...(issue?.path ?? [])],
        message: issue?.message ?? 'invalid item',
      });
      return;
    }
  });
  return defineSkill<BatchInput>({
    id: 'batch',
    name: 'Batch',
    description: `Runs one operation over up to ${MAX_ITEMS} items with bounded concurrency and progress; per-item results stream as NDJSON. Operations: ${names.map((n) => `${n} (${operations[n]?.description})`).join('; ')}.`,
    tags: ['batch', 'bulk', 'ndjson'],
    examples: [
      '{"skill":"batch","input":{"operation":"checksum","items":[{"text":"hello"}],"concurrency":4}}',
    ],
    input,
    pollIntervalMs: 2000,
    ttlMs: 7 * 86_400_000,
    onInterrupt: 'rerun',
    async run(ctx) {
      const op = lookup(ctx.input.operation);
      if (!op) return { state: 'failed', message: `Unknown operation "${ctx.input.operation}"` };
      return runBatch(ctx, op);
    },
  });
}

interface Failure {
  index: number;
  error: string;
}

async function runBatch(ctx: SkillContext<BatchInput>, op: BatchOperation): Promise<SkillOutcome> {
  const { operation, items, concurrency, stopOnError } = ctx.input;
  const total = items.length;
  /** Each item's NDJSON line once it has settled. */
  const lines: (string | undefined)[] = new Array(total);
  const results = new ResultLog(ctx, lines);
  // Aborted by the task's signal and by stopOnError: stops starting items and aborts running ones.
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // one listener per running item, plus the operations' own
  const follow = () => stop.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', follow, { once: true });
  if (ctx.signal.aborted) follow();

  let next = 0;
  let ok = 0;
  let failed = 0;
  let firstFailure: Failure | undefined;
  let stoppedBy: Failure | undefined;
  const worker = async () => {
    while (!stop.signal.aborted && next < total) {
      const index = next++;
      const itemResult = await runItem(op, items[index], stop.signal);
      if (!itemResult) return;
      if ('error' in itemResult) {
        failed++;
        if (!firstFailure || index < firstFailure.index) firstFailure = { index, error: itemResult.error };
        if (stopOnError && !stoppedBy) {
          stoppedBy = { index, error: itemResult.error };
          stop.abort('stop-on-error');
        }
      } else ok++;
      lines[index] = JSON.stringify({ index, ...itemResult });
      const done = ok + failed;
      await ctx.progress({
        percent: Math.floor((done / total) * 100),
        message: `${done} of ${total} done, ${failed} failed`,
      });
      await results.settled();
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  } catch (err) {
    stop.abort(err);
    throw err;
  } finally {
    ctx.signal.removeEventListener('abort', follow);
  }
  ctx.signal.throwIfAborted();
  await results.finish();

  const done = ok + failed;
  const skipped = total - done;
  const partial = failed > 0 || skipped > 0;
  const summary = { operation, total, ok, failed, skipped, partial, firstFailure, stoppedBy };
  await ctx.artifact({
    artifactId: `batch-summary-${ctx.taskId}`,
    name: 'summary.json',
    description: `Summary of ${operation} over ${total} items`,
    parts: [{ data: summary, mediaType: 'application/json' }],
    metadata: { partial, total, ok, failed, skipped },
  });
  if (stoppedBy) {
    return {
      state: 'failed',
      message: `Stopped at items[${stoppedBy.index}] (stopOnError): ${stoppedBy.error}; ${done} of ${total} items done, ${failed} failed (see results)`,
    };
  }
  if (failed === total) {
    const first = firstFailure ? `; items[${firstFailure.index}]: ${firstFailure.error}` : '';
    return { state: 'failed', message: `All ${total} items failed (see results)${first}` };
  }
  if (failed > 0) return { message: `${failed} of ${total} items failed (see results)` };
  return { message: `${total} items done` };
}

type Settled = { ok: true; result: unknown } | { ok: false; error: string };

/** Runs one item; undefined when the batch stopped before or while it ran (the item is skipped). */
async function runItem(op: BatchOperation, raw: unknown, signal: AbortSignal): Promise<Settled | undefined> {
  if (signal.aborted) return undefined;
  let onAbort: (() => void) | undefined;
  try {
    const item = op.input.parse(raw);
    // Raced with the signal: an operation that ignores it cannot hold the batch after a cancel.
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const result = (await Promise.race([op.run(item, signal), aborted])) ?? null;
    JSON.stringify(result); // fails the item now (cycle, BigInt) rather than the whole batch later
    return { ok: true, result };
  } catch (err) {
    if (signal.aborted) return undefined;
    return { ok: false, error: errorText(err) };
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

function errorText(err: unknown): string {
  if (err instanceof z.ZodError) {
    const issue = err.issues[0];
    return `invalid item${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message}`;
  }
  // An item is the caller's data: a runtime message about it would show the server's internals.
  return isJobError(err) ? err.message : 'the operation failed unexpectedly on this item';
}

/**
 * Writes settled results to `results.ndjson` in index order: a chunk once CHUNK_ITEMS lines in a
 * row are ready (or FLUSH_MS passed), the rest at the end. Writes are queued so chunks never race.
 */
class ResultLog {
  readonly #ctx: SkillContext<unknown>;
  readonly #lines: readonly (string | undefined)[];
  readonly #artifactId: string;
  /** Lines before this index are written (or were skipped by a stop). */
  #written = 0;
  /** Every line before this index has settled. */
  #ready = 0;
  #chunks = 0;
  #lastWriteAt = Date.now();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(ctx: SkillContext<unknown>, lines: readonly (string | undefined)[]) {
    this.#ctx = ctx;
    this.#lines = lines;
    this.#artifactId = `batch-results-${ctx.taskId}`;
  }

  /** Called after each settled item. */
  settled(): Promise<unknown> {
    while (this.#ready < this.#lines.length && this.#lines[this.#ready] !== undefined) this.#ready++;
    const pending = this.#ready - this.#written;
    // The final lines wait for finish(), which marks them as the last chunk.
    if (this.#ready === this.#lines.length) return Promise.resolve();
    if (pending >= CHUNK_ITEMS || (pending > 0 && Date.now() - this.#lastWriteAt >= FLUSH_MS)) {
      return this.#write(this.#ready, false);
    }
    return Promise.resolve();
  }

  /** Writes every settled line not written yet (skipping items that never ran) as the last chunk. */
  finish(): Promise<unknown> {
    return this.#write(this.#lines.length, true);
  }

  #write(to: number, lastChunk: boolean): Promise<unknown> {
    const text = this.#lines
      .slice(this.#written, to)
      .filter((l) => l !== undefined)
      .map((l) => `${l}\n`)
      .join('');
    this.#written = to;
    this.#lastWriteAt = Date.now();
    const append = this.#chunks++ > 0;
    const filename = 'results.ndjson';
    this.#queue = this.#queue.then(() =>
      this.#ctx.artifact({
        artifactId: this.#artifactId,
        name: filename,
        description: `Per-item results, one JSON line per item in index order`,
        parts: [{ raw: Buffer.from(text).toString('base64'), filename, mediaType: 'application/x-ndjson' }],
        append,
        lastChunk,
      }),
    );
    return this.#queue;
  }
}
