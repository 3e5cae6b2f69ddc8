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
