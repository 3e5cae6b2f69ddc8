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
import { waitFor } from '../helpers.js';

const { h, t, another } = harnessEach((t) => ({ skills: t.skills, defaultSkill: 'quick' }));

/** Runs a fresh quick task to completion: once it is done, the runner has seen everything queued before it. */
async function barrier(): Promise<void> {
  await waitForState(h.engine, await submit(h.engine, text('barrier')), 'completed');
}

describe('send', () => {
  it('creates a task in submitted that the runner takes to completed', async () => {
    const message = text('hello', { contextId: 'ctx-given' });
    const result = await submitted(h.engine, message, OWNER, { origin: 'test' });
    expect(result.created).toBe(true);
    const { record, history } = result.view;
    expect(record).toMatchObject({
      owner: OWNER,
      skill: 'quick',
      state: 'submitted',
      contextId: 'ctx-given',
      input: { text: 'hello' },
      metadata: { origin: 'test' },
    });
    expect(history).toEqual([{ ...message, taskId: record.id, contextId: 'ctx-given' }]);

    h.startRunner();
    const done = await waitForState(h.engine, record.id, 'completed');
    expect(textOf(done.statusMessage)).toBe('done: hello');
    expect(done.attempts).toBe(1);
    expect(t.runs('quick')).toBe(1);
    const view = await h.engine.get(OWNER, record.id);
    expect(view.history.map((m) => m.messageId)).toEqual([message.messageId]);
  });

  it('gives a task without a contextId a fresh one', async () => {
    const a = await submit(h.engine, text('a'));
    const b = await submit(h.engine, text('b'));
    const [ra, rb] = await Promise.all([h.engine.get(OWNER, a), h.engine.get(OWNER, b)]);
    expect(ra.record.contextId).toEqual(expect.any(String));
    expect(ra.record.contextId).not.toBe(rb.record.contextId);
  });

  it('is idempotent: the same messageId returns the same task and nothing new runs', async () => {
    const message = text('once');
    const first = await submitted(h.engine, message);
    const again = await submitted(h.engine, { ...message, parts: [{ text: 'changed' }] });
    expect(again.created).toBe(false);
    expect(again.view.record.id).toBe(first.view.record.id);

    h.startRunner();
    await waitForState(h.engine, first.view.record.id, 'completed');
    const late = await submitted(h.engine, message);
    expect(late).toMatchObject({ created: false, view: { record: { id: first.view.record.id } } });
    expect(late.view.record.state).toBe('completed');

    await barrier();
    expect(t.runs('quick')).toBe(2); // the task and the barrier
    const { page } = await h.engine.list(OWNER, { pageSize: 10, withArtifacts: false, historyLength: 0 });
    expect(page.totalSize).toBe(2);
    // Message ids are per owner: another caller's message with the same id is its own task.
    expect(await submit(h.engine, message, 'bob')).not.toBe(first.view.record.id);
  });

  it('records a message to a working task in its history without a second execution', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('waits', {}));
    await t.jobStarted(id);
    const follow = text('also this', { taskId: id });
    const result = await answer(h.engine, id, follow);
    if (result.grant !== 'owner') throw new Error('expected the owner’s task back');
    expect(result.view.record.state).toBe('working');
    expect(result.view.history.map((m) => m.messageId)).toContain(follow.messageId);
    // Delivered once, however often it is sent.
    await answer(h.engine, id, follow);
    const view = await h.engine.get(OWNER, id);
    expect(view.history.filter((m) => m.messageId === follow.messageId)).toHaveLength(1);

    await barrier();
    expect(t.runs('waits')).toBe(1);
    await h.engine.cancel(OWNER, id);
    expect(t.runs('waits')).toBe(1);
  });

  it('refuses a message to a terminal task with unsupported-operation', async () => {
    h.startRunner();
    const id = await submit(h.engine, text('x'));
    await waitForState(h.engine, id, 'completed');
    const error = await thrown(() => answer(h.engine, id, text('more'), OWNER));
    expect(error).toMatchObject({ name: 'EngineError', code: 'unsupported-operation' });
  });

  it('refuses a message whose contextId is not its task’s with invalid-params', async () => {
    const id = await submit(h.engine, text('x'));
    const error = await thrown(() => answer(h.engine, id, text('y', { contextId: 'other' })));
    expect(error).toMatchObject({ code: 'invalid-params' });
  });

  it('answers task-not-found for an unknown task and for another owner’s task', async () => {
    const id = await submit(h.engine, text('mine'));
    for (const attempt of [
      () => answer(h.engine, 'no-such-task', text('x'), OWNER),
      () => answer(h.engine, id, text('x'), 'bob'),
      () => h.engine.get('bob', id),
      () => h.engine.get(OWNER, 'no-such-task'),
      () => h.engine.cancel('bob', id),
      () => h.engine.cancel(OWNER, 'no-such-task'),
    ]) {
      expect(await thrown(attempt)).toMatchObject({ code: 'task-not-found' });
    }
    expect((await h.engine.list('bob', { pageSize: 10, withArtifacts: false })).page.totalSize).toBe(0);
  });
});

describe('skill selection', () => {
  it('takes the skill and input from a {skill, input} data part', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('greet', { name: 'Ada' }));
    const done = await waitForState(h.engine, id, 'completed');
    expect(done).toMatchObject({ skill: 'greet', input: { name: 'Ada' } });
    expect(textOf(done.statusMessage)).toBe('Hello Ada');
  });

  it('takes the skill from metadata.skill', async () => {
    const id = await submit(
      h.engine,
      text('hi', { metadata: { skill: 'greet', input: { name: 'Bo', excited: true } } }),
    );
    const { record } = await h.engine.get(OWNER, id);
    expect(record).toMatchObject({ skill: 'greet', input: { name: 'Bo', excited: true } });
  });

  it('falls back to the default skill', async () => {
    const id = await submit(h.engine, text('plain words'));
    const { record } = await h.engine.get(OWNER, id);
    expect(record).toMatchObject({ skill: 'quick', input: { text: 'plain words' } });
  });

  it('refuses an unknown skill with unknown-skill, creating nothing', async () => {
    for (const message of [call('nope', {}), text('x', { metadata: { skill: 'nope' } })]) {
      const error = await thrown(() => submitted(h.engine, message));
      expect(error).toMatchObject({ code: 'unknown-skill' });
      expect((error as Error).message).toContain('"nope"');
    }
    expect((await h.engine.list(OWNER, { pageSize: 10, withArtifacts: false })).page.totalSize).toBe(0);
  });

  it('refuses invalid input with invalid-params naming the field, creating nothing', async () => {
    const missing = await thrown(() => submitted(h.engine, call('greet', {})));
    expect(missing).toMatchObject({ code: 'invalid-params' });
    expect((missing as Error).message).toMatch(/input\.name/);
    const wrongType = await thrown(() => submitted(h.engine, call('greet', { name: 'x', excited: 'yes' })));
    expect((wrongType as Error).message).toMatch(/input\.excited/);
    expect((await h.engine.list(OWNER, { pageSize: 10, withArtifacts: false })).page.totalSize).toBe(0);
  });
});

describe('running skills', () => {
  it('parks a task in input-required and runs it again with the answer', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('ask', {}));
    const parked = await waitForState(h.engine, id, 'input-required');
    expect(textOf(parked.statusMessage)).toBe('What is your name?');

    await answer(h.engine, id, text('Ada'));
    const done = await waitForState(h.engine, id, 'completed');
    expect(textOf(done.statusMessage)).toBe('Hello Ada (attempt 2)');
    expect(t.runs('ask')).toBe(2);
    const { history } = await h.engine.get(OWNER, id);
    expect(history.map((m) => [m.role, textOf(m)])).toEqual([
      ['ROLE_USER', ''],
      ['ROLE_AGENT', 'What is your name?'],
      ['ROLE_USER', 'Ada'],
    ]);
  });

  it('takes an answer sent while the job still ran as the answer to its next question', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('asks-when-let', {}));
    await t.jobStarted(id);
    // The task is working: the message joins its history and queues nothing.
    await answer(h.engine, id, text('Grace'), OWNER);
    t.askGate.resolve();
    const done = await waitForState(h.engine, id, 'completed');
    expect(textOf(done.statusMessage)).toBe('Hello Grace');
  });

  it('fails a task whose job throws, with the error in the status message', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('boom', {}));
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toContain('disk on fire');
    expect(t.runs('boom')).toBe(1);
  });

  it('fails a task whose job has a bug without showing the runtime message: the owner is told it is logged', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('buggy', {}));
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toBe(
      'Job failed: an internal error in the skill "buggy" (the server logged it)',
    );
  });

  it('folds artifact chunks into one artifact and keeps the latest progress', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('chunks', {}));
    await waitForState(h.engine, id, 'completed');
    const view = await h.engine.get(OWNER, id);
    expect(view.artifacts).toEqual([
      { artifactId: 'out', name: 'out.txt', parts: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] },
    ]);
    expect(view.record.progress).toEqual({ percent: 100, message: 'done' });
    expect(textOf(view.record.statusMessage)).toBe('three chunks');
    expect(view.history.map(textOf)).toContain('halfway');

    const log = await h.store.readEvents(id, 0, 100);
    const progress = log.flatMap((e) => (e.event.kind === 'progress' ? [e.event.progress] : []));
    expect(progress[0]).toEqual({ percent: 10, message: 'starting' });
    expect(progress.at(-1)).toEqual({ percent: 100, message: 'done' });
    const chunks = log.flatMap((e) => (e.event.kind === 'artifact' ? [e.event] : []));
    expect(chunks.map((c) => [c.append, c.lastChunk])).toEqual([
      [false, false],
      [true, false],
      [true, true],
    ]);
  });
});

describe('progress', () => {
  it('a report that changes nothing writes no event', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('repeats', {}));
    await waitForState(h.engine, id, 'completed');
    const progress = (await h.store.readEvents(id, 0, 100)).filter((e) => e.event.kind === 'progress');
    expect(progress.map((e) => e.event)).toEqual([
      { kind: 'progress', progress: { percent: 10, message: 'same' } },
      { kind: 'progress', progress: { percent: 20, message: 'same' } },
    ]);
  });
});

describe('the transition table guards every write', () => {
  it('refuses a transition the table does not have, and leaves out states that cannot lead to the target', async () => {
    const id = await submit(h.engine, call('waits', {}));
    const at = h.engine.now();
    await expect(
      h.journal.commit({ taskId: id, from: ['completed', 'failed'], to: 'working', events: [], at }),
    ).rejects.toThrow(/no transition leads from completed\|failed to working/);
    // 'submitted' cannot go to 'input-required': the write matches no row, although the task is submitted.
    const refused = await h.journal.commit({
      taskId: id,
      from: ['submitted', 'working'],
      to: 'input-required',
      events: [],
      at,
    });
    expect(refused).toBeUndefined();
    expect((await h.engine.get(OWNER, id)).record.state).toBe('submitted');
  });
});

describe('cancel', () => {
  it('cancels a queued task at once, with a canceled status event, and it never runs', async () => {
    const id = await submit(h.engine, call('greet', { name: 'never' }));
    const view = await h.engine.cancel(OWNER, id);
    expect(view.record.state).toBe('canceled');
    expect(textOf(view.record.statusMessage)).toBe('Canceled by request');
    const last = (await h.store.readEvents(id, 0, 100)).at(-1);
    expect(last?.event).toMatchObject({ kind: 'status', state: 'canceled' });

    h.startRunner();
    await barrier();
    expect(t.runs('greet')).toBe(0);
    expect((await h.engine.get(OWNER, id)).record.state).toBe('canceled');
  });

  it('cancels an input-required task at once', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('ask', {}));
    await waitForState(h.engine, id, 'input-required');
    expect((await h.engine.cancel(OWNER, id)).record.state).toBe('canceled');
    const last = (await h.store.readEvents(id, 0, 100)).at(-1);
    expect(last?.event).toMatchObject({ kind: 'status', state: 'canceled' });
  });

  it('cancels a working task whose job honours its signal, with reason cancel', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('waits', {}));
    await t.jobStarted(id);
    const view = await h.engine.cancel(OWNER, id);
    expect(view.record.state).toBe('canceled');
    // The job's own cancel, not the grace period's (10 s here) forced one.
    expect(textOf(view.record.statusMessage)).toBe('Canceled by request');
    expect(t.reasons.get(id)).toBe('cancel');
  });

  it('a job that asks for input after its cancel ends canceled, not input-required', async () => {
    h.startRunner();
    const id = await submit(h.engine, call('asks-late', {}));
    await t.jobStarted(id);
    const view = await h.engine.cancel(OWNER, id);
    expect(view.record.state).toBe('canceled');
    expect(textOf(view.record.statusMessage)).toBe('Canceled by request');
  });

  it('refuses to cancel a terminal task with task-not-cancelable', async () => {
    h.startRunner();
    const id = await submit(h.engine, text('x'));
    await waitForState(h.engine, id, 'completed');
    expect(await thrown(() => h.engine.cancel(OWNER, id))).toMatchObject({ code: 'task-not-cancelable' });
    const queued = await submit(h.engine, call('waits', {}));
    await h.engine.cancel(OWNER, queued);
    expect(await thrown(() => h.engine.cancel(OWNER, queued))).toMatchObject({ code: 'task-not-cancelable' });
  });
});

describe('cancel of a job that ignores its signal', () => {
  it('marks the task canceled after cancelGraceMs and refuses the job’s later writes', async () => {
    const slow = another({ skills: t.skills, cancelGraceMs: 50 });
    const runner = slow.startRunner();
    const id = await submit(slow.engine, call('stubborn', {}));
    await t.jobStarted(id);
    const view = await slow.engine.cancel(OWNER, id);
    expect(view.record.state).toBe('canceled');
    expect(textOf(view.record.statusMessage)).toMatch(/did not stop in time/);
    const logged = await slow.store.readEvents(id, 0, 100);
    expect(logged.at(-1)?.event).toMatchObject({ kind: 'status', state: 'canceled' });

    t.stubbornGate.resolve();
    await waitFor(
      () => (runner.activeJobs === 0 ? true : undefined),
      () => 'the job to end',
    );
    expect(t.reasons.get(id)).toBe('cancel');
    expect(t.lateWrites.get(id)).not.toBe('written');
    const after = await slow.engine.get(OWNER, id);
    expect(after.record.state).toBe('canceled');
    expect(after.record.statusMessage).toEqual(view.record.statusMessage);
    expect(after.artifacts).toEqual([]);
    expect(await slow.store.readEvents(id, 0, 100)).toEqual(logged);
  });
});
