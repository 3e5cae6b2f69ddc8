import { describe, expect, it } from 'vitest';
import { listenEventId, parseListenEventId, shownDigest } from '../../../src/faces/mcp/listen-id.js';

describe('subscriptions/listen event ids', () => {
  const ids = ['t-1', 't-2', 't-3'];
  const shown = shownDigest('["working",null,null]');

  it('carry each task’s position and shown digest, read back for the same list of task ids', () => {
    const at = [{ seq: 12, shown }, undefined, { seq: 0, shown }];
    const id = listenEventId(ids, at);
    expect(id).toMatch(/^tl1\.[A-Za-z0-9_-]{11}\.12~[A-Za-z0-9_-]{8}\.-\.0~[A-Za-z0-9_-]{8}$/);
    expect(parseListenEventId(id, ids)).toEqual(at);
    expect(parseListenEventId(` ${id} `, ids)).toEqual(at);
  });

  it('name their list: another list, another order or another length does not take them', () => {
    const id = listenEventId(ids, [undefined, undefined, undefined]);
    expect(parseListenEventId(id, ['t-1', 't-3', 't-2'])).toBeUndefined();
    expect(parseListenEventId(id, ['t-1', 't-2'])).toBeUndefined();
    expect(parseListenEventId(id, [])).toBeUndefined();
    // The digest of the right list with one position too few or too many.
    const [head] = id.split('.-');
    expect(parseListenEventId(`${head}.-.-`, ids)).toBeUndefined();
    expect(parseListenEventId(`${id}.-`, ids)).toBeUndefined();
  });

  it('refuse anything else: garbage, a 2025-11-25 stream id, an unbounded number, a position without its digest', () => {
    for (const text of [
      '',
      'tl1.',
      'abc.12',
      'eyJpZCI6MX0.5',
      `tl1.${'A'.repeat(11)}.1e9`,
      `tl1.${'A'.repeat(11)}.${'9'.repeat(16)}~AAAAAAAA`,
    ]) {
      expect(parseListenEventId(text, ['x'])).toBeUndefined();
    }
    const id = listenEventId(['x'], [{ seq: 3, shown }]);
    expect(parseListenEventId(id.replace(/~.*$/, ''), ['x'])).toBeUndefined();
    // A listen of no tasks has no positions: its ids resume it as such.
    expect(parseListenEventId(listenEventId([], []), [])).toEqual([]);
    expect(parseListenEventId(listenEventId([], []), ['x'])).toBeUndefined();
  });
});
