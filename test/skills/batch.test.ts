import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isEngineError, JobError } from '../../src/engine/errors.js';
import { BUILTIN_OPERATIONS, batchSkill, defineOperation } from '../../src/skills/batch.js';
import {
  artifactText,
  call,
  harnessEach,
  OWNER,
  submit,
  submitted,
  textOf,
  thrown,
  waitForState,
} from '../engine-harness.js';
import { waitFor } from '../helpers.js';

/** Test operations with probes: how many items started, how many run at once, which saw an abort. */
function probedOperations() {
  const probe = { started: 0, active: 0, maxActive: 0, aborted: 0 };
  const slow = defineOperation({
    description: 'doubles n after ms; fails when asked',
    input: z.object({ n: z.number(), ms: z.number().int().min(0).default(0), fail: z.boolean().optional() }),
    async run(item, signal) {
      probe.started++;
      probe.active++;
      probe.maxActive = Math.max(probe.maxActive, probe.active);
      try {
        await sleep(item.ms, undefined, { signal });
        if (item.fail) throw new JobError(`item ${item.n} is bad`);
        return item.n * 2;
      } finally {
        probe.active--;
      }
    },
  });
  const hold = defineOperation({
    description: 'waits for its signal',
    input: z.object({}),
    run(_item, signal) {
      probe.started++;
      return new Promise((_, reject) =>
        signal.addEventListener(
          'abort',
          () => {
            probe.aborted++;
            reject(signal.reason);
          },
          { once: true },
        ),
      );
    },
  });
  /** An operation with a bug: what the runtime says of it must not reach the caller. */
  const buggy = defineOperation({
    description: 'reads a field of nothing',
    input: z.object({ n: z.number() }),
    async run(item) {
      return (undefined as unknown as { of: Record<number, string> }).of[item.n];
    },
  });
  return { probe, operations: { ...BUILTIN_OPERATIONS, slow, hold, buggy } };
}

const { h, open } = harnessEach();
let probe: ReturnType<typeof probedOperations>['probe'];

beforeEach(() => {
  const ops = probedOperations();
  probe = ops.probe;
  open({ skills: [batchSkill(ops.operations)], runner: {} });
});

type Line = { index: number; ok: true; result: unknown } | { index: number; ok: false; error: string };

/** The task's results artifact, decoded into its NDJSON lines, and its summary artifact. */
async function outputs(id: string) {
  const { artifacts } = await h.engine.get(OWNER, id);
  const text = await artifactText(h.engine, id, 'results.ndjson');
  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
  const summary = artifacts.find((a) => a.name === 'summary.json');
  return { lines, summary, data: summary?.parts[0]?.data as Record<string, unknown> | undefined };
}

const run = (input: unknown) => submit(h.engine, call('batch', input));

describe('batch skill', () => {
  it('returns results in index order although later items finish first', async () => {
    // Earlier items sleep longer: with 4 at once they settle roughly in reverse.
    const items = Array.from({ length: 24 }, (_, n) => ({ n, ms: (24 - n) * 2 }));
    const id = await run({ operation: 'slow', items, concurrency: 4 });
    const done = await waitForState(h.engine, id, 'completed');
    expect(textOf(done.statusMessage)).toBe('24 items done');
    const { lines, summary } = await outputs(id);
    expect(lines).toEqual(items.map(({ n }) => ({ index: n, ok: true, result: n * 2 })));
    expect(summary?.metadata).toMatchObject({ partial: false, total: 24, ok: 24, failed: 0 });
    expect(done.progress).toEqual({ percent: 100, message: '24 of 24 done, 0 failed' });
  });

  it('runs at most `concurrency` items at once', async () => {
    const items = Array.from({ length: 30 }, (_, n) => ({ n, ms: 5 }));
    const id = await run({ operation: 'slow', items, concurrency: 3 });
    await waitForState(h.engine, id, 'completed');
    expect(probe.started).toBe(30);
    expect(probe.maxActive).toBe(3);
  });

  it('completes with a partial flag and the failures named when some items fail', async () => {
    const items = Array.from({ length: 10 }, (_, n) => ({ n, fail: n === 2 || n === 7 }));
    const id = await run({ operation: 'slow', items });
    const done = await waitForState(h.engine, id, 'completed');
    expect(textOf(done.statusMessage)).toBe('2 of 10 items failed (see results)');
    expect(done.progress).toEqual({ percent: 100, message: '10 of 10 done, 2 failed' });
    const { lines, summary, data } = await outputs(id);
    expect(lines.map((l) => l.ok)).toEqual(items.map((i) => !i.fail));
    expect(lines[7]).toEqual({ index: 7, ok: false, error: 'item 7 is bad' });
    expect(summary?.metadata).toEqual({ partial: true, total: 10, ok: 8, failed: 2, skipped: 0 });
    expect(data).toMatchObject({ firstFailure: { index: 2, error: 'item 2 is bad' } });
  });

  it('fails when every item fails', async () => {
    const id = await run({
      operation: 'slow',
      items: [
        { n: 1, fail: true },
        { n: 2, fail: true },
      ],
    });
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toBe('All 2 items failed (see results); items[0]: item 1 is bad');
    expect((await outputs(id)).lines).toHaveLength(2);
  });

  it("an item an operation fails by a bug reads as an unexpected failure, not the runtime's message", async () => {
    const id = await run({ operation: 'buggy', items: [{ n: 1 }] });
    await waitForState(h.engine, id, 'failed');
    const { lines } = await outputs(id);
    expect(lines).toEqual([{ index: 0, ok: false, error: 'the operation failed unexpectedly on this item' }]);
  });

  it('stopOnError stops at the first failure and starts nothing after it', async () => {
    const items = Array.from({ length: 20 }, (_, n) => ({ n, fail: n === 3 }));
    const id = await run({ operation: 'slow', items, concurrency: 1, stopOnError: true });
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toBe(
      'Stopped at items[3] (stopOnError): item 3 is bad; 4 of 20 items done, 1 failed (see results)',
    );
    expect(probe.started).toBe(4);
    const { lines, summary } = await outputs(id);
    expect(lines.map((l) => [l.index, l.ok])).toEqual([
      [0, true],
      [1, true],
      [2, true],
      [3, false],
    ]);
    expect(summary?.metadata).toMatchObject({ partial: true, skipped: 16 });
  });

  it('cancel aborts the running items promptly and starts no new ones', async () => {
    const id = await run({
      operation: 'hold',
      items: Array.from({ length: 10 }, () => ({})),
      concurrency: 2,
    });
    await waitFor(
      () => (probe.started === 2 ? true : undefined),
      () => `2 items to start (${probe.started} did)`,
    );
    const asked = Date.now();
    await h.engine.cancel(OWNER, id);
    await waitForState(h.engine, id, 'canceled');
    expect(Date.now() - asked).toBeLessThan(1000);
    expect(probe.aborted).toBe(2);
    // Once a later batch has run, anything the canceled one might still start would have started.
    await waitForState(h.engine, await run({ operation: 'slow', items: [{ n: 1 }] }), 'completed');
    expect(probe.started).toBe(3);
  });

  it('refuses a bad request before a task exists, naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ operation: 'nope', items: [1] }, 'input.operation'],
      [{ operation: 'toString', items: [1] }, 'input.operation'],
      [{ operation: 'slow', items: [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 'four' }] }, 'input.items.3.n'],
      [{ operation: 'checksum', items: [{ text: 'a', base64: 'YQ==' }] }, 'input.items.0'],
      [{ operation: 'slow', items: [] }, 'input.items'],
      [{ operation: 'slow', items: [{ n: 1 }], concurrency: 33 }, 'input.concurrency'],
    ];
    for (const [input, field] of cases) {
      const err = await thrown(() => submitted(h.engine, call('batch', input)));
      if (!isEngineError(err)) throw err;
      expect(err.code).toBe('invalid-params');
      expect(err.message).toContain(`Invalid ${field} for skill "batch"`);
    }
    const unknown = await thrown(() => submitted(h.engine, call('batch', { operation: 'nope', items: [1] })));
    expect(String(unknown)).toContain('this agent offers: checksum, transform, validate, slow, hold');
    const { page } = await h.engine.list(OWNER, { pageSize: 10, withArtifacts: false });
    expect(page.totalSize).toBe(0);
  });

  it('streams a 5,000-item batch in a few appended chunks', async () => {
    const items = Array.from({ length: 5000 }, (_, i) => ({ text: `item ${i}` }));
    const id = await run({ operation: 'checksum', items, concurrency: 8 });
    await waitForState(h.engine, id, 'completed', 20_000);
    const log = await h.store.readEvents(id, 0, 10_000);
    const chunks = log.flatMap((e) =>
      e.event.kind === 'artifact' && e.event.artifact.name === 'results.ndjson' ? [e.event] : [],
    );
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.length).toBeLessThanOrEqual(20);
    expect(chunks[0]?.append).toBe(false);
    expect(chunks.slice(1).every((c) => c.append)).toBe(true);
    expect(chunks.map((c) => c.lastChunk)).toEqual(chunks.map((_, i) => i === chunks.length - 1));
    expect(chunks.every((c) => c.artifact.parts.every((p) => p.raw || p.blob?.size))).toBe(true); // no empty chunk
    const { lines } = await outputs(id);
    expect(lines.map((l) => l.index)).toEqual(items.map((_, i) => i));
    const sha = createHash('sha256').update('item 4999').digest('hex');
    expect(lines[4999]).toEqual({
      index: 4999,
      ok: true,
      result: { algorithm: 'sha256', digest: sha, bytes: 9 },
    });
  });
});

describe('built-in operations', () => {
  it('checksum hashes text or base64 bytes', async () => {
    const items = [{ text: 'hello' }, { base64: Buffer.from('hello').toString('base64'), algorithm: 'md5' }];
    const id = await run({ operation: 'checksum', items });
    await waitForState(h.engine, id, 'completed');
    const { lines } = await outputs(id);
    expect(lines.map((l) => l.ok && l.result)).toEqual([
      { algorithm: 'sha256', digest: createHash('sha256').update('hello').digest('hex'), bytes: 5 },
      { algorithm: 'md5', digest: createHash('md5').update('hello').digest('hex'), bytes: 5 },
    ]);
  });

  it('transform picks and renames fields, and fails an item missing one', async () => {
    const fields = { id: 'user.id', city: 'address.city', first: 'tags.0' };
    const items: unknown[] = [
      { value: { user: { id: 7 }, address: { city: 'Oslo' }, tags: ['a', 'b'], secret: 'x' }, fields },
      { value: { user: { id: 8 }, tags: [] }, fields },
      { value: { constructor: 1 }, fields: { c: 'toString' } },
    ];
    const id = await run({ operation: 'transform', items });
    const done = await waitForState(h.engine, id, 'completed');
    expect(textOf(done.statusMessage)).toBe('2 of 3 items failed (see results)');
    expect((await outputs(id)).lines).toEqual([
      { index: 0, ok: true, result: { id: 7, city: 'Oslo', first: 'a' } },
      { index: 1, ok: false, error: 'missing field "address.city"' },
      { index: 2, ok: false, error: 'missing field "toString"' },
    ]);
  });

  it('validate reports each value as valid or with its errors', async () => {
    const schema = {
      type: 'object',
      required: ['name', 'age'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1 },
        age: { type: 'integer', minimum: 0 },
        tags: { type: 'array', items: { enum: ['a', 'b'] } },
      },
    };
    const items = [
      { value: { name: 'Ada', age: 36, tags: ['a'] }, schema },
      { value: { name: '', age: 1.5, tags: ['c'], extra: true }, schema },
    ];
    const id = await run({ operation: 'validate', items });
    await waitForState(h.engine, id, 'completed');
    const { lines } = await outputs(id);
    expect(lines[0]).toEqual({ index: 0, ok: true, result: { valid: true, errors: [] } });
    expect(lines[1]).toEqual({
      index: 1,
      ok: true,
      result: {
        valid: false,
        errors: [
          '$.name: shorter than 1',
          '$.age: expected integer, got number',
          '$.tags[0]: not one of ["a","b"]',
          '$.extra: not allowed',
        ],
      },
    });
    // A keyword it does not know is refused, not silently ignored.
    const err = await thrown(() =>
      submitted(
        h.engine,
        call('batch', { operation: 'validate', items: [{ value: 1, schema: { pattern: 'x' } }] }),
      ),
    );
    expect(String(err)).toContain('input.items.0.schema');
  });
});
