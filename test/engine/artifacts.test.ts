import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { withContent } from '../../src/engine/artifact-reader.js';
import { REPLY_ARTIFACT } from '../../src/engine/artifact-write.js';
import { ARTIFACT_BYTES } from '../../src/engine/artifacts.js';
import type { LoggedEvent } from '../../src/engine/events.js';
import { defineSkill } from '../../src/engine/skill.js';
import {
  answer,
  artifactText,
  call,
  harnessEach,
  OWNER,
  submit,
  text,
  textOf,
  waitForState,
} from '../engine-harness.js';

/** Writes `count` text artifacts of `size` bytes each ("a0", "a1"...), then a big one if asked. */
const writer = defineSkill({
  id: 'writer',
  description: 'writes artifacts',
  input: z.object({ count: z.number(), size: z.number() }),
  pollIntervalMs: 100,
  ttlMs: 60_000,
  onInterrupt: 'fail',
  maxArtifactBytes: 5000,
  async run(ctx) {
    for (let i = 0; i < ctx.input.count; i++) {
      await ctx.artifact({
        artifactId: `a${i}`,
        name: `a${i}.txt`,
        parts: [{ text: String(i % 10).repeat(ctx.input.size) }],
      });
    }
    return undefined;
  },
});

/** Writes an inline-sized artifact, asks for input, then (run again with the answer) writes another. */
const asker = defineSkill({
  id: 'asker',
  description: 'writes, asks, writes',
  input: z.object({}),
  pollIntervalMs: 100,
  ttlMs: 60_000,
  onInterrupt: 'fail',
  async run(ctx) {
    if (ctx.attempt === 1) await ctx.artifact({ artifactId: 'before', parts: [{ text: 'b'.repeat(800) }] });
    await ctx.requestInput('go on?');
    await ctx.artifact({ artifactId: 'after', parts: [{ text: 'a'.repeat(800) }] });
    return undefined;
  },
});

/** Writes the same by-reference artifact on every run (as a job replayed with an answer does), asking once. */
const rewriter = defineSkill({
  id: 'rewriter',
  description: 'writes one artifact again on each run',
  input: z.object({ size: z.number() }),
  pollIntervalMs: 100,
  ttlMs: 60_000,
  onInterrupt: 'fail',
  async run(ctx) {
    await ctx.artifact({
      artifactId: 'report',
      name: 'report.txt',
      parts: [{ text: 'r'.repeat(ctx.input.size) }],
    });
    await ctx.requestInput('again?');
    await ctx.artifact({
      artifactId: 'report',
      name: 'report.txt',
      parts: [{ text: 'R'.repeat(ctx.input.size) }],
    });
    return undefined;
  },
});

/** Replies "done"; with `artifact`, writes one of its own first; with `reject`, rejects. */
const replier = defineSkill({
  id: 'replier',
  description: 'replies',
  input: z.object({ artifact: z.boolean().default(false), reject: z.boolean().default(false) }),
  pollIntervalMs: 100,
  ttlMs: 60_000,
  onInterrupt: 'fail',
  async run(ctx) {
    if (ctx.input.artifact) await ctx.artifact({ artifactId: 'table', parts: [{ data: { rows: 3 } }] });
    return ctx.input.reject ? { state: 'rejected' as const, message: 'no' } : { message: 'done' };
  },
});

/**
 * Ends with its result: an artifact of `size` bytes in its outcome (after a first chunk written by
 * ctx.artifact when `chunks` is 2), with its last progress.
 */
const ender = defineSkill({
  id: 'ender',
  description: 'ends with its artifact',
  input: z.object({ size: z.number(), chunks: z.number().default(1) }),
  pollIntervalMs: 100,
  ttlMs: 60_000,
  maxArtifactBytes: 5000,
  onInterrupt: 'fail',
  async run(ctx) {
    const { size, chunks } = ctx.input;
    if (chunks > 1)
      await ctx.artifact({ artifactId: 'out', name: 'out.txt', parts: [{ text: 'a'.repeat(size) }] });
    return {
      message: 'all done',
      artifact: {
        artifactId: 'out',
        name: 'out.txt',
        parts: [{ text: 'b'.repeat(size), filename: 'out.txt', mediaType: 'text/plain' }],
        append: chunks > 1,
        lastChunk: true,
      },
      progress: { percent: 100, message: 'finished' },
    };
  },
});

const { h } = harnessEach(() => ({
  skills: [writer, asker, rewriter, replier, ender],
  limits: { inlineArtifactBytes: 1000, maxStoredBytes: 20_000 },
  runner: {},
}));

describe('artifacts past the inline size', () => {
  it('many small artifacts of one task add up to the inline size: later ones are shown by reference too', async () => {
    const id = await submit(h.engine, call('writer', { count: 5, size: 400 }));
    await waitForState(h.engine, id, 'completed');
    const { artifacts } = await h.engine.get(OWNER, id);
    expect(artifacts.map((a) => (a.parts[0]?.text !== undefined ? 'inline' : 'linked'))).toEqual([
      'inline',
      'inline',
      'linked',
      'linked',
      'linked',
    ]);
    expect(artifacts[4]?.parts[0]).toEqual({
      url: `/v1/jobs/${id}/artifacts/a4`,
      filename: 'a4.txt',
      mediaType: 'text/plain',
      metadata: { [ARTIFACT_BYTES]: 400 },
    });
    expect(await artifactText(h.engine, id, 'a4.txt')).toBe('4'.repeat(400));
  });

  it('the inline size counts what earlier runs of the task wrote inline', async () => {
    const id = await submit(h.engine, call('asker', {}));
    await waitForState(h.engine, id, 'input-required');
    await answer(h.engine, id, text('yes'));
    await waitForState(h.engine, id, 'completed');
    const { artifacts } = await h.engine.get(OWNER, id);
    expect(artifacts.map((a) => [a.artifactId, a.parts[0]?.url === undefined ? 'inline' : 'linked'])).toEqual(
      [
        ['before', 'inline'],
        ['after', 'linked'],
      ],
    );
  });

  it("a skill's own maxArtifactBytes is below the server's: the job fails before writing past it", async () => {
    const id = await submit(h.engine, call('writer', { count: 1, size: 6000 }));
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toMatch(/would hold 6000 bytes; at most 5000 are kept/);
  });

  it('the stored-bytes quota is per owner, over all its tasks: the write past it fails the job, whole', async () => {
    const first = await submit(h.engine, call('writer', { count: 4, size: 4000 }));
    await waitForState(h.engine, first, 'completed');
    const second = await submit(h.engine, call('writer', { count: 2, size: 4000 }));
    const failed = await waitForState(h.engine, second, 'failed');
    expect(textOf(failed.statusMessage)).toMatch(/past its quota of 20000 \(MAX_STORED_BYTES\)/);
    const { artifacts } = await h.engine.get(OWNER, second);
    expect(artifacts.map((a) => a.artifactId)).toEqual(['a0']);
    const other = await submit(h.engine, call('writer', { count: 2, size: 4000 }), 'bob');
    await waitForState(h.engine, other, 'completed');
  });

  it('an artifact written again (same id, each run) is stored and counted once: the quota holds it, its old content is gone', async () => {
    // 12,000 bytes against a quota of 20,000: written three times (twice in the run that asks,
    // once more in the run that answers), counted as three copies it would fail.
    const id = await submit(h.engine, call('rewriter', { size: 12_000 }));
    await waitForState(h.engine, id, 'input-required');
    await answer(h.engine, id, text('yes'));
    await waitForState(h.engine, id, 'completed');
    expect(await artifactText(h.engine, id, 'report.txt')).toBe('R'.repeat(12_000));
    // The old copies' pieces were dropped: only the last write's event holds stored content.
    const found = await h.store.getTaskWithLog(id, Date.now());
    const seqs = (found?.log ?? []).filter((e) => e.event.kind === 'artifact').map((e) => e.seq);
    const held = await Promise.all(seqs.map((seq) => h.store.readBlobPiece(id, seq, 0, 0)));
    expect(held.map((piece) => piece !== undefined)).toEqual([false, false, true]);
    // A stream replaying the log from its start shows a dropped copy as a link to what it is now.
    const first = found?.log.find((e) => e.seq === seqs[0]) as LoggedEvent;
    const replayed = await withContent(h.store, first, (a) => `/v1/jobs/${id}/artifacts/${a}`);
    expect(replayed.event.kind === 'artifact' && replayed.event.artifact.parts).toEqual([
      expect.objectContaining({ url: `/v1/jobs/${id}/artifacts/report` }),
    ]);
    // What is left of the quota is the rest of it: another 8,000 bytes fit.
    const more = await submit(h.engine, call('writer', { count: 2, size: 4000 }));
    await waitForState(h.engine, more, 'completed');
  });
});

describe("an outcome's artifact and progress, written with the ending", () => {
  /** The log's last `n` events (progress included, which a task's view leaves out). */
  const lastEvents = async (id: string, n: number) => (await h.store.readEvents(id, 0, 1000)).slice(-n);

  it('is one commit: the artifact, the progress and the completed status, in that order; no reply artifact beside it', async () => {
    const id = await submit(h.engine, call('ender', { size: 10 }));
    const done = await waitForState(h.engine, id, 'completed');
    expect(done.progress).toEqual({ percent: 100, message: 'finished' });
    const events = await lastEvents(id, 3);
    expect(events.map((e) => e.event.kind)).toEqual(['artifact', 'progress', 'status']);
    // One write: consecutive sequence numbers, one timestamp.
    expect(events.map((e) => e.seq - (events[0]?.seq ?? 0))).toEqual([0, 1, 2]);
    expect(new Set(events.map((e) => e.at)).size).toBe(1);
    const view = await h.engine.get(OWNER, id);
    expect(view.artifacts.map((a) => [a.artifactId, a.parts[0]?.text])).toEqual([['out', 'b'.repeat(10)]]);
    expect(textOf(view.record.statusMessage)).toBe('all done');
  });

  it("appends to what ctx.artifact wrote, and goes by reference past the inline size, like ctx.artifact's", async () => {
    const id = await submit(h.engine, call('ender', { size: 800, chunks: 2 }));
    await waitForState(h.engine, id, 'completed');
    const { artifacts } = await h.engine.get(OWNER, id);
    expect(artifacts.map((a) => a.artifactId)).toEqual(['out']);
    expect(await artifactText(h.engine, id, 'out.txt')).toBe('a'.repeat(800) + 'b'.repeat(800));
  });

  it("is refused past the skill's cap: the job fails saying so, and completes nothing", async () => {
    const id = await submit(h.engine, call('ender', { size: 6000 }));
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toMatch(/would hold 6000 bytes; at most 5000 are kept/);
    expect((await h.engine.get(OWNER, id)).artifacts).toEqual([]);
  });
});

describe('the reply is the result when the job wrote no artifact', () => {
  it('a completed task whose job wrote nothing else holds its reply as the artifact "reply", marked; one with artifacts, or rejected, does not', async () => {
    const replied = await submit(h.engine, call('replier', {}));
    await waitForState(h.engine, replied, 'completed');
    const view = await h.engine.get(OWNER, replied);
    expect(textOf(view.record.statusMessage)).toBe('done');
    expect(view.artifacts).toEqual([
      { artifactId: 'reply', name: 'reply', parts: [{ text: 'done' }], metadata: { [REPLY_ARTIFACT]: true } },
    ]);
    const withOwn = await submit(h.engine, call('replier', { artifact: true }));
    await waitForState(h.engine, withOwn, 'completed');
    expect((await h.engine.get(OWNER, withOwn)).artifacts.map((a) => a.artifactId)).toEqual(['table']);
    const rejected = await submit(h.engine, call('replier', { reject: true }));
    await waitForState(h.engine, rejected, 'rejected');
    expect((await h.engine.get(OWNER, rejected)).artifacts).toEqual([]);
  });
});
