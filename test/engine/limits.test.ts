import { describe, expect, it } from 'vitest';
import {
  answer,
  call,
  harnessEach,
  OWNER,
  submit,
  submitted,
  text,
  textOf,
  thrown,
  waitForState,
} from '../engine-harness.js';

const { h } = harnessEach((t) => ({
  skills: t.skills,
  defaultSkill: 'quick',
  limits: { maxMessageParts: 2, maxHistoryMessages: 2, maxHistoryBytes: 1000, maxArtifactBytes: 2 },
}));

describe('engine limits', () => {
  it('refuses a message with more parts than maxMessageParts, naming the limit, and makes nothing', async () => {
    const message = { ...text('a'), parts: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] };
    expect(await thrown(() => submitted(h.engine, message))).toMatchObject({
      code: 'invalid-params',
      message: 'message.parts has 3 parts; at most 2 are accepted',
    });
    expect((await h.engine.list(OWNER, { pageSize: 10, withArtifacts: false })).page.totalSize).toBe(0);
  });

  it('refuses a message to a task whose history is full', async () => {
    const id = await submit(h.engine, call('waits', {}));
    await answer(h.engine, id, text('second'));
    expect(await thrown(() => answer(h.engine, id, text('third')))).toMatchObject({
      code: 'unsupported-operation',
      message: expect.stringContaining('holds 2 messages'),
    });
    expect((await h.engine.get(OWNER, id)).history).toHaveLength(2);
  });

  it('fails a job whose artifact grows past maxArtifactBytes, keeping what came before', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('chunks', {}));
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toMatch(/artifact out would hold 3 bytes; at most 2 are kept/);
    const { artifacts } = await h.engine.get(OWNER, id);
    expect(artifacts[0]?.parts.map((p) => p.text)).toEqual(['a', 'b']);
  });

  it('refuses a message that would take the history past maxHistoryBytes, naming the setting', async () => {
    const id = await submit(h.engine, call('waits', {}));
    expect(await thrown(() => answer(h.engine, id, text('x'.repeat(2000))))).toMatchObject({
      code: 'unsupported-operation',
      message: expect.stringMatching(/more than the 1000 it accepts \(MAX_HISTORY_BYTES\)/),
    });
    expect((await h.engine.get(OWNER, id)).history).toHaveLength(1);
  });

  it('ends a ListTasks page of large histories early, and the next page carries on from there', async () => {
    const big = 'x'.repeat(3 * 2 ** 20);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await submit(h.engine, text(big)));
    const first = await h.engine.list(OWNER, { pageSize: 10, withArtifacts: false });
    expect(first.views).toHaveLength(3);
    expect(first.page.nextPageToken).not.toBe('');
    const second = await h.engine.list(OWNER, {
      pageSize: 10,
      withArtifacts: false,
      pageToken: first.page.nextPageToken,
    });
    const seen = [...first.views, ...second.views].map((v) => v.record.id);
    expect(seen.sort()).toEqual(ids.sort());
    expect(second.page.nextPageToken).toBe('');
  });
});
