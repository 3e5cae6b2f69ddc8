import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineSkill } from '../../src/engine/skill.js';
import { approvalSkill } from '../../src/skills/approval.js';
import { exportSkill } from '../../src/skills/export.js';
import {
  answer,
  call,
  harnessEach,
  OWNER,
  submit,
  text,
  textOf,
  thrown,
  waitForState,
} from '../engine-harness.js';
import { waitFor } from '../helpers.js';

/** Bob's owner key and the name approver lists know him by. */
const BOB = { owner: 'api-key:acme/bob', approverName: 'acme/bob' };
const MALLORY = { owner: 'api-key:acme/mallory', approverName: 'acme/mallory' };

const { h, open } = harnessEach(() => ({ skills: [approvalSkill, exportSkill], runner: {} }));

const reply = (id: string, t: string, who?: typeof BOB) =>
  answer(h.engine, id, text(t), who?.owner ?? OWNER, { approverName: who?.approverName });

describe('approvals: durable waits for a person', () => {
  it('waits for the named approver, who decides; the result says who', async () => {
    const id = await submit(h.engine, call('approval', { action: 'Deploy v2', approver: 'acme/bob' }));
    const waiting = await waitForState(h.engine, id, 'input-required');
    expect(textOf(waiting.statusMessage)).toMatch(/^Approve or reject: Deploy v2/);
    expect(waiting.approvers).toEqual(['acme/bob']);
    // Someone else is told the task does not exist, and changes nothing.
    expect(await thrown(() => reply(id, 'approve', MALLORY))).toMatchObject({ code: 'task-not-found' });
    await reply(id, 'approve: ship it', BOB);
    const done = await waitForState(h.engine, id, 'completed');
    expect(textOf(done.statusMessage)).toBe('Approved by acme/bob: ship it');
    expect(done.approvers).toBeUndefined();
    // Once it no longer waits, the approver has no access at all.
    expect(await thrown(() => reply(id, 'approve', BOB))).toMatchObject({ code: 'task-not-found' });
  });

  it("an owner cannot answer in an approver's name: the server sets who answered, replacing the sender's claim", async () => {
    const ALICE = { owner: 'api-key:acme/alice', approverName: 'acme/alice' };
    const id = await submit(
      h.engine,
      call('approval', { action: 'Deploy v3', approver: 'acme/bob' }),
      ALICE.owner,
    );
    await waitForState(h.engine, id, 'input-required');
    const forged = text('approve', {
      taskId: id,
      metadata: { 'taskhandle.answeredBy': 'acme/bob', note: 'x' },
    });
    await answer(h.engine, id, forged, ALICE.owner, { approverName: ALICE.approverName });
    const done = await waitForState(h.engine, id, 'completed');
    expect(textOf(done.statusMessage)).toBe('Approved by acme/alice');
    const { history } = await h.engine.get(ALICE.owner, id);
    expect(history.at(-1)?.metadata).toEqual({ 'taskhandle.answeredBy': 'acme/alice', note: 'x' });
  });

  it('gives an approver only the receipt of their answer, and the owner its task as before', async () => {
    const id = await submit(
      h.engine,
      call('export', { rows: 3, approvalOverRows: 1, approval: { approver: 'acme/bob' } }),
    );
    const waiting = await waitForState(h.engine, id, 'input-required');
    const result = await reply(id, 'approve', BOB);
    expect(result).toEqual({
      grant: 'approver',
      receipt: {
        taskId: id,
        state: 'submitted',
        at: expect.any(Number),
        prompt: {
          messageId: waiting.statusMessage?.messageId,
          role: 'ROLE_AGENT',
          parts: waiting.statusMessage?.parts,
          taskId: id,
        },
        answeredBy: 'acme/bob',
      },
    });
    await waitForState(h.engine, id, 'completed');
    const own = await submit(h.engine, call('export', { rows: 3, approvalOverRows: 1 }));
    await waitForState(h.engine, own, 'input-required');
    // The owner answering its own task gets the task, its history included.
    const mine = await reply(own, 'approve');
    if (mine.grant !== 'owner') throw new Error(`the owner got a ${mine.grant}'s answer`);
    expect(mine.view.history.length).toBeGreaterThan(1);
  });

  it('tells an approver that a full task takes no answer, without the owner’s counts', async () => {
    await h.close();
    open({ skills: [approvalSkill], limits: { maxHistoryMessages: 1 }, runner: {} });
    const id = await submit(h.engine, call('approval', { action: 'Deploy', approver: 'acme/bob' }));
    await waitForState(h.engine, id, 'input-required');
    const refused = await thrown(() => reply(id, 'approve', BOB));
    expect(refused).toMatchObject({ code: 'unsupported-operation' });
    expect((refused as Error).message).toBe(
      `Task ${id} cannot take this answer (it is full); send a shorter one, or ask its requester`,
    );
    // The owner is told the numbers.
    expect(await thrown(() => reply(id, 'approve'))).toMatchObject({ message: /holds 1 messages/ });
  });

  it('fails a job that names a malformed approver, saying which and what the forms are', async () => {
    const skill = defineSkill({
      id: 'bad-approver',
      description: 'asks an approver by a name that is none',
      input: z.object({}),
      pollIntervalMs: 1000,
      ttlMs: 60_000,
      onInterrupt: 'rerun',
      run: async (ctx) => ctx.ask({ prompt: 'OK?', approvers: ['acme bob'] }),
    });
    await h.close();
    open({ skills: [skill], runner: {} });
    const id = await submit(h.engine, call('bad-approver', {}));
    const failed = await waitForState(h.engine, id, 'failed');
    expect(textOf(failed.statusMessage)).toMatch(/approvers\[0\] must be "tenant\/principal".*"acme bob"/);
  });

  it('lets the requester decide when no approver is named, and a rejection rejects the task', async () => {
    const id = await submit(h.engine, call('approval', { action: 'Delete the old bucket' }));
    await waitForState(h.engine, id, 'input-required');
    await reply(id, 'no, keep it');
    const done = await waitForState(h.engine, id, 'rejected');
    expect(textOf(done.statusMessage)).toBe(`Rejected by ${OWNER}: keep it`);
  });

  it('keeps waiting after an answer the schema refuses, saying what was wrong', async () => {
    const id = await submit(h.engine, call('approval', { action: 'Rotate keys' }));
    await waitForState(h.engine, id, 'input-required');
    await reply(id, 'maybe later');
    let waiting = await waitForState(h.engine, id, 'input-required');
    for (let i = 0; i < 50 && !textOf(waiting.statusMessage).includes('not accepted'); i++) {
      await new Promise((r) => setTimeout(r, 20));
      waiting = await waitForState(h.engine, id, 'input-required');
    }
    expect(textOf(waiting.statusMessage)).toMatch(/Your last answer was not accepted: .*approve.*reject/);
    await answer(h.engine, id, { ...text('x'), parts: [{ data: { decision: 'approve' } }] });
    expect(textOf((await waitForState(h.engine, id, 'completed')).statusMessage)).toBe(
      `Approved by ${OWNER}`,
    );
  });

  it('lists what waits for a caller: its own tasks, and those naming it as approver', async () => {
    const forBob = await submit(h.engine, call('approval', { action: 'A', approver: 'acme/bob' }));
    const ownWait = await submit(h.engine, call('approval', { action: 'B' }));
    await waitForState(h.engine, forBob, 'input-required');
    await waitForState(h.engine, ownWait, 'input-required');
    const states: string[] = [];
    const stop = h.engine.onStatus((_id, state) => states.push(state));
    expect((await h.engine.waitingFor(BOB.owner, BOB.approverName)).map((r) => r.id)).toEqual([forBob]);
    expect((await h.engine.waitingFor(OWNER, undefined)).map((r) => r.id)).toEqual([forBob, ownWait]);
    expect(await h.engine.waitingFor(MALLORY.owner, MALLORY.approverName)).toEqual([]);
    await reply(forBob, 'approve', BOB);
    await waitForState(h.engine, forBob, 'completed');
    expect(await h.engine.waitingFor(BOB.owner, BOB.approverName)).toEqual([]);
    // Listeners hear a change once it is durable, which can be after a poll already read it.
    await waitFor(
      () => states.includes('completed') || undefined,
      () => `the status listener to hear completed (heard ${states.join(', ')})`,
    );
    expect(states).toEqual(expect.arrayContaining(['submitted', 'working', 'completed']));
    stop();
  });

  it('fails a wait whose deadline passed', async () => {
    const id = await submit(h.engine, call('approval', { action: 'Late', deadlineHours: 0.000_01 }));
    const failed = await waitForState(h.engine, id, 'failed', 10_000);
    expect(textOf(failed.statusMessage)).toBe('No answer came before the deadline');
  });

  it('export asks for sign-off above approvalOverRows, then exports; below it, exports at once', async () => {
    const small = await submit(h.engine, call('export', { rows: 5, approvalOverRows: 10 }));
    await waitForState(h.engine, small, 'completed');
    const big = await submit(
      h.engine,
      call('export', { rows: 20, approvalOverRows: 10, approval: { approver: 'acme/bob' } }),
    );
    const waiting = await waitForState(h.engine, big, 'input-required');
    expect(textOf(waiting.statusMessage)).toMatch(/Approve exporting 20 rows/);
    await reply(big, 'approve', BOB);
    const done = await waitForState(h.engine, big, 'completed');
    expect(textOf(done.statusMessage)).toBe('Exported 20 rows to export.csv');
  });
});
