import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineSkill } from '../../src/engine/skill.js';
import type { StreamItem } from '../../src/engine/streams.js';
import { isTerminal } from '../../src/engine/task.js';
import { call, harnessEach, OWNER, submit, text, thrown, waitForState } from '../engine-harness.js';
import { waitFor } from '../helpers.js';

const { h, t, open, another } = harnessEach((t) => ({ skills: t.skills, defaultSkill: 'quick' }));
let streams: AbortController;

beforeEach(() => {
  streams = new AbortController();
});

afterEach(() => {
  streams.abort();
});

/** Reads a stream to its end; fails (instead of hanging) if it does not end within the timeout. */
async function drain(stream: AsyncGenerator<StreamItem>, timeoutMs = 5000): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  const timer = setTimeout(() => streams.abort(), timeoutMs);
  try {
    for await (const item of stream) items.push(item);
  } finally {
    clearTimeout(timer);
  }
  if (streams.signal.aborted) throw new Error(`the stream did not end; it gave ${items.length} items`);
  return items;
}

const seqOf = (item: StreamItem) => (item.kind === 'task' ? item.seq : item.entry.seq);

describe('engine.stream', () => {
  it('yields the task first, then its events in order, and ends after the terminal status', async () => {
    const id = await submit(h.engine, call('chunks', {}));
    const stream = h.engine.stream(OWNER, id, { signal: streams.signal });
    const first = await stream.next();
    if (first.done || first.value.kind !== 'task') throw new Error('expected the task first');
    const snapshot = first.value;
    expect(snapshot.view.record.state).toBe('submitted');
    expect(snapshot.seq).toBe(snapshot.view.record.lastSeq);

    h.startRunner();
    const rest = await drain(stream);
    expect(rest.every((i) => i.kind === 'event')).toBe(true);
    expect(rest.map(seqOf)).toEqual(rest.map((_, i) => snapshot.seq + 1 + i));
    const entries = rest.flatMap((i) => (i.kind === 'event' ? [i.entry] : []));
    expect(entries).toEqual(await h.store.readEvents(id, snapshot.seq, 1000));
    expect(entries.at(-1)?.event).toMatchObject({ kind: 'status', state: 'completed' });
    const kinds = new Set(entries.map((e) => e.event.kind));
    expect(kinds).toEqual(new Set(['status', 'progress', 'artifact']));
  });

  it('reads no events from the store after its snapshot: the hub hands it each one', async () => {
    // Thousands of subscribers of one task each read the store after every event they were handed;
    // and a snapshot read once the hub listens holds all that came before.
    const read = h.store.readEvents.bind(h.store);
    let reads = 0;
    h.store.readEvents = (...args) => {
      reads++;
      return read(...args);
    };
    const id = await submit(h.engine, call('chunks', {}));
    const stream = h.engine.stream(OWNER, id, { signal: streams.signal });
    await stream.next();
    h.startRunner();
    const rest = await drain(stream);
    expect(rest.length).toBeGreaterThan(3);
    expect(reads).toBe(0);
  });

  it('a replay longer than one store read (500 events) gives every event to the end', async () => {
    const many = defineSkill({
      description: 'many events',
      pollIntervalMs: 1000,
      ttlMs: 3_600_000,
      id: 'many',
      input: z.object({}),
      onInterrupt: 'rerun',
      async run(ctx) {
        const artifactId = await ctx.artifact({ artifactId: 'out', parts: [{ text: '0' }] });
        for (let i = 1; i < 1200; i++)
          await ctx.artifact({ artifactId, parts: [{ text: `${i}` }], append: true });
        return { message: 'many chunks' };
      },
    });
    await h.close();
    open({ skills: [...t.skills, many], defaultSkill: 'quick' });
    const id = await submit(h.engine, call('many', {}));
    h.startRunner();
    await waitForState(h.engine, id, 'completed');
    // Replayed from the start once it has ended: nothing more comes from the hub, all from the store.
    const items = await drain(h.engine.stream(OWNER, id, { afterSeq: 0, signal: streams.signal }), 20_000);
    expect(items.map(seqOf)).toEqual(items.map((_, i) => i + 1));
    expect(items.length).toBeGreaterThan(1200);
    const last = items.at(-1);
    expect(last?.kind === 'event' && last.entry.event).toMatchObject({ kind: 'status', state: 'completed' });
  });

  it('with afterSeq replays the log from there, without the snapshot', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('chunks', {}));
    await waitForState(h.engine, id, 'completed');
    const items = await drain(h.engine.stream(OWNER, id, { afterSeq: 2, signal: streams.signal }));
    expect(items.every((i) => i.kind === 'event')).toBe(true);
    const log = await h.store.readEvents(id, 2, 1000);
    // Each event carries its task's context: no face reads the task to learn it.
    const { contextId } = await h.engine.record(OWNER, id);
    expect(items).toEqual(log.map((entry) => ({ kind: 'event', entry, contextId })));
  });

  it('with afterSeq resumes a live task and follows it to the end', async () => {
    const id = await submit(h.engine, call('chunks', {}));
    const items = drain(h.engine.stream(OWNER, id, { afterSeq: 1, signal: streams.signal }));
    h.startRunner();
    const seqs = (await items).map(seqOf);
    const last = (await h.engine.get(OWNER, id)).record.lastSeq;
    expect(seqs).toEqual(Array.from({ length: last - 1 }, (_, i) => i + 2));
  });

  it('with afterSeq at the last event of a finished task ends at once', async () => {
    h.startRunner();
    const id = await submit(h.engine, text('x'));
    const done = await waitForState(h.engine, id, 'completed');
    expect(
      await drain(h.engine.stream(OWNER, id, { afterSeq: done.lastSeq, signal: streams.signal })),
    ).toEqual([]);
  });

  it('gives only the snapshot for a task that has ended', async () => {
    h.startRunner();
    const id = await submit(h.engine, text('x'));
    await waitForState(h.engine, id, 'completed');
    const items = await drain(h.engine.stream(OWNER, id, { signal: streams.signal }));
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ kind: 'task', view: { record: { state: 'completed' } } });
    // Refused from the task's record alone: its log is not read for it.
    const reads = vi.spyOn(h.store, 'getTaskWithLog');
    const refused = await thrown(() =>
      drain(h.engine.stream(OWNER, id, { requireActive: true, signal: streams.signal })),
    );
    expect(refused).toMatchObject({
      code: 'unsupported-operation',
      message: `Task ${id} is completed; nothing to stream`,
    });
    expect(reads.mock.calls).toEqual([[id, expect.any(Number), OWNER, true]]);
    expect((await reads.mock.results[0]?.value)?.log).toEqual([]);
  });

  it('ends with the canceled status when a queued task is canceled', async () => {
    const id = await submit(h.engine, call('waits', {}));
    const stream = h.engine.stream(OWNER, id, { signal: streams.signal });
    await stream.next();
    const rest = drain(stream);
    await h.engine.cancel(OWNER, id);
    const items = await rest;
    expect(items.at(-1)).toMatchObject({
      kind: 'event',
      entry: { event: { kind: 'status', state: 'canceled' } },
    });
  });

  it('ends when its signal aborts', async () => {
    const id = await submit(h.engine, call('waits', {}));
    const own = new AbortController();
    const stream = h.engine.stream(OWNER, id, { signal: own.signal });
    await stream.next();
    const pending = stream.next();
    own.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(h.hub.watchedTasks).toBe(0);
  });

  it('refuses another owner with task-not-found', async () => {
    const id = await submit(h.engine, text('x'));
    expect(await thrown(() => drain(h.engine.stream('bob', id, { signal: streams.signal })))).toMatchObject({
      code: 'task-not-found',
    });
  });
});

describe('engine.waitUntil', () => {
  it('returns once the task settles', async () => {
    h.startRunner();
    const id = await submit(h.engine, text('x'));
    const record = await h.engine.waitUntil(id, isTerminal, 10_000);
    expect(record.state).toBe('completed');
  });

  it('returns the task as it stands when the timeout passes, without throwing', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('waits', {}));
    await t.jobStarted(id);
    const record = await h.engine.waitUntil(id, isTerminal, 30);
    expect(record.state).toBe('working');
    expect(h.hub.watchedTasks).toBe(0);
  });

  it('returns when its own signal aborts', async () => {
    const id = await submit(h.engine, call('waits', {}));
    const own = new AbortController();
    const pending = h.engine.waitUntil(id, isTerminal, 60_000, own.signal);
    own.abort();
    expect((await pending).state).toBe('submitted');
  });

  it('throws task-not-found for an unknown task', async () => {
    expect(await thrown(() => h.engine.waitUntil('nope', isTerminal, 10))).toMatchObject({
      code: 'task-not-found',
    });
  });
});

describe('engine.awaitGeneration (long-poll GetTask)', () => {
  it('answers at once for a task past the generation, with no stream slot taken', async () => {
    const id = await submit(h.engine, call('quick', {}));
    const { lastSeq } = await h.engine.record(OWNER, id);
    expect(await h.engine.awaitGeneration(OWNER, id, lastSeq - 1, 30_000)).toBe(lastSeq);
  });

  it('is answered by the write that passes the generation', async () => {
    const id = await submit(h.engine, call('quick', {}));
    const { lastSeq } = await h.engine.record(OWNER, id);
    const waiting = h.engine.awaitGeneration(OWNER, id, lastSeq, 30_000, streams.signal);
    h.startRunner();
    expect(await waiting).toBeGreaterThan(lastSeq);
  });

  it('ends at its wait with the generation unchanged, and when its signal aborts', async () => {
    const id = await submit(h.engine, call('quick', {}));
    const { lastSeq } = await h.engine.record(OWNER, id);
    expect(await h.engine.awaitGeneration(OWNER, id, lastSeq, 100)).toBe(lastSeq);
    const stop = new AbortController();
    const waiting = h.engine.awaitGeneration(OWNER, id, lastSeq, 30_000, stop.signal);
    stop.abort('gone');
    expect(await waiting).toBe(lastSeq);
  });

  it("refuses another owner's task as not found, before any wait", async () => {
    const id = await submit(h.engine, call('quick', {}));
    const err = await thrown(() => h.engine.awaitGeneration('mallory', id, 0, 30_000));
    expect(err).toMatchObject({ code: 'task-not-found' });
  });

  it("holds one of the owner's stream slots while it waits (MAX_STREAMS)", async () => {
    const bounded = another({
      skills: t.skills,
      defaultSkill: 'quick',
      limits: { maxStreams: 1 },
    });
    const id = await submit(bounded.engine, call('quick', {}));
    const { lastSeq } = await bounded.engine.record(OWNER, id);
    const stop = new AbortController();
    const first = bounded.engine.awaitGeneration(OWNER, id, lastSeq, 30_000, stop.signal);
    await waitFor(
      () => (bounded.hub.watchedTasks === 1 ? true : undefined),
      () => 'the first poll to wait',
    );
    const err = await thrown(() => bounded.engine.awaitGeneration(OWNER, id, lastSeq, 30_000));
    expect(err).toMatchObject({ code: 'too-many-streams' });
    stop.abort('done');
    await first;
    // Given back: the next one waits (and ends with its short wait).
    expect(await bounded.engine.awaitGeneration(OWNER, id, lastSeq, 50)).toBe(lastSeq);
  });
});
