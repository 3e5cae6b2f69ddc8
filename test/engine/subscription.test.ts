import { describe, expect, it } from 'vitest';
import type { StreamItem } from '../../src/engine/streams.js';
import type { StreamSink } from '../../src/engine/subscription.js';
import { call, harnessEach, OWNER, submit } from '../engine-harness.js';
import { waitFor } from '../helpers.js';

const { h } = harnessEach((t) => ({ skills: t.skills, defaultSkill: 'quick', limits: { maxStreams: 1 } }));

/** A sink that records what it is given; while `hold` is set, each item holds the stream until released. */
function recorder() {
  const items: StreamItem[] = [];
  let release: (() => void) | undefined;
  let ended: { err?: unknown } | undefined;
  const sink: StreamSink & { hold: boolean } = {
    hold: false,
    item(item) {
      items.push(item);
      if (!sink.hold) return undefined;
      return new Promise<void>((r) => {
        release = r;
      });
    },
    end(err) {
      ended = { err };
    },
  };
  return {
    sink,
    items,
    ended: () => ended,
    release: () => {
      const r = release;
      release = undefined;
      r?.();
    },
  };
}

const seqOf = (item: StreamItem) => (item.kind === 'task' ? item.seq : item.entry.seq);

describe('engine.subscribe', () => {
  it('a sink that holds the stream gets every event afterwards, in order, then the end, and the slot back', async () => {
    const id = await submit(h.engine, call('chunks', {}));
    const r = recorder();
    r.sink.hold = true;
    h.engine.subscribe(OWNER, id, {}, r.sink);
    await waitFor(
      () => (r.items.length === 1 ? true : undefined),
      () => 'the snapshot',
    );
    h.startRunner();
    // Held at the snapshot while the job runs to its end: nothing more is handed over meanwhile.
    await h.engine.waitUntil(id, (s) => s === 'completed', 10_000);
    expect(r.items).toHaveLength(1);
    r.sink.hold = false;
    r.release();
    await waitFor(
      () => r.ended(),
      () => 'the stream to end',
    );
    expect(r.ended()).toEqual({ err: undefined });
    const first = r.items[0] as StreamItem;
    expect(r.items.map(seqOf)).toEqual(r.items.map((_, i) => seqOf(first) + i));
    const last = r.items.at(-1);
    expect(last?.kind === 'event' && last.entry.event).toMatchObject({ kind: 'status', state: 'completed' });
    expect(h.hub.watchedTasks).toBe(0);
    // The one slot (MAX_STREAMS 1) was given back: another stream opens.
    const again = recorder();
    h.engine.subscribe(OWNER, id, { afterSeq: 0 }, again.sink);
    await waitFor(
      () => again.ended(),
      () => 'the replay to end',
    );
    expect(again.ended()).toEqual({ err: undefined });
  });

  it('closed before its snapshot, it hands over nothing and gives its slot back', async () => {
    const id = await submit(h.engine, call('waits', {}));
    const r = recorder();
    h.engine.subscribe(OWNER, id, {}, r.sink).close();
    const next = recorder();
    h.engine.subscribe(OWNER, id, {}, next.sink);
    await waitFor(
      () => (next.items.length === 1 ? true : undefined),
      () => 'the second stream to open',
    );
    expect(r.items).toEqual([]);
    expect(r.ended()).toBeUndefined();
  });

  it('refuses past MAX_STREAMS through end(), before anything is read', async () => {
    const id = await submit(h.engine, call('waits', {}));
    const open = recorder();
    const handle = h.engine.subscribe(OWNER, id, {}, open.sink);
    const refused = recorder();
    h.engine.subscribe(OWNER, id, {}, refused.sink);
    await waitFor(
      () => refused.ended(),
      () => 'the refusal',
    );
    expect(refused.ended()?.err).toMatchObject({ code: 'too-many-streams' });
    expect(refused.items).toEqual([]);
    handle.close();
  });
});
