import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMessage, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';

describe('an approval over A2A: the requester asks, a named approver answers', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme', bob: 'acme', eve: 'acme' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('waits in input-required until bob approves, then alice sees who approved', async () => {
    const message = skillMessage('approval', { action: 'Deploy v2 to production', approver: 'acme/bob' });
    const created = await agent.rpc(
      'SendMessage',
      { message, configuration: { returnImmediately: true } },
      V1,
    );
    const id = created.body.result.task.id;
    const waiting = await agent.waitForState(id, 'TASK_STATE_INPUT_REQUIRED');
    expect(waiting.status.message.parts[0].text).toMatch(/^Approve or reject: Deploy v2 to production/);

    const reply = (who: string, text: string) =>
      agent
        .as(who)
        .rpc(
          'SendMessage',
          { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', taskId: id, parts: [{ text }] } },
          V1,
        );
    // eve is not the approver: for her the task does not exist.
    expect((await reply('eve', 'approve')).body.error.code).toBe(-32001);
    const answered = await reply('bob', 'approve: go');
    expect(answered.body.error).toBeUndefined();

    const done = await agent.waitForState(id, 'TASK_STATE_COMPLETED');
    expect(done.status.message.parts[0].text).toBe('Approved by acme/bob: go');
    // The answer is in the history, marked with who gave it.
    const bobs = done.history.find((m: { parts: { text?: string }[] }) => m.parts[0]?.text === 'approve: go');
    expect(bobs.metadata['taskhandle.answeredBy']).toBe('acme/bob');
  });
});

describe('an answer sent with the contextId but no taskId (as ADK sends it)', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({ apiKeys: { alice: 'acme', mallory: 'acme' } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const answerByContext = (who: string, contextId: string) =>
    agent.as(who).rpc(
      'SendMessage',
      {
        message: {
          messageId: crypto.randomUUID(),
          role: 'ROLE_USER',
          contextId,
          parts: [{ text: 'approve' }],
        },
      },
      V1,
    );

  it('is refused naming the one task of that context waiting for the caller, and never another principal’s', async () => {
    const message = skillMessage('approval', { action: 'Deploy', approver: 'acme/alice' });
    const created = await agent.rpc(
      'SendMessage',
      { message, configuration: { returnImmediately: true } },
      V1,
    );
    const { id, contextId } = created.body.result.task;
    await agent.waitForState(id, 'TASK_STATE_INPUT_REQUIRED');

    const mine = await answerByContext('alice', contextId);
    expect(mine.body.error.code).toBe(-32602);
    expect(mine.body.error.message).toContain(`Task ${id} of this context waits for your input`);
    expect(mine.body.error.message).toContain(`"taskId": "${id}"`);
    // Someone else naming that context learns nothing of the task.
    const theirs = await answerByContext('mallory', contextId);
    expect(theirs.body.error.message).not.toContain(id);
    expect(theirs.body.error.message).toContain('names no skill');
  });
});
