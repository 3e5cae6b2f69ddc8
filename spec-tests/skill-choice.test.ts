import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactText, csvLines, legacyMessage, skillMessage, V1 } from './a2a.js';
import { type Agent, launch, userMessage } from './harness.js';

/**
 * How a caller's choice of skill and input is understood, on every face: a typo in an input key is
 * refused (never silently ignored for a default), text must name a skill, a v1.0 message has a role.
 */
describe('choosing a skill: no silent defaults', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch();
  });
  afterAll(() => agent.stop());

  const taskCount = async (): Promise<number> =>
    (await agent.rpc('ListTasks', { pageSize: 100, historyLength: 0 }, V1)).body.result.totalSize;

  it('refuses an input key the skill does not know, naming it and the nearest known one (A2A and /v1/jobs)', async () => {
    const before = await taskCount();
    const { body } = await agent.rpc('SendMessage', { message: skillMessage('export', { row: 5 }) }, V1);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain('unknown key "row" (did you mean "rows"?)');
    expect(body.error.message).toContain('skill "export"');

    const res = await fetch(`${agent.url}/v1/jobs`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...agent.credentials },
      body: JSON.stringify({ skill: 'approval', input: { action: 'Deploy', aprover: 'acme/bob' } }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(JSON.stringify(await res.json())).toContain(
      'unknown key \\"aprover\\" (did you mean \\"approver\\"?)',
    );
    // Nested objects are checked too: a typo inside `approval` is not dropped.
    const nested = await agent.rpc(
      'SendMessage',
      {
        message: skillMessage('export', { rows: 3, approvalOverRows: 1, approval: { approvr: 'acme/bob' } }),
      },
      V1,
    );
    expect(nested.body.error.message).toContain('unknown key "approvr" (did you mean "approver"?)');
    expect(await taskCount()).toBe(before);
  });

  it('refuses text that names no skill, listing the skills with an example; text that names one runs it', async () => {
    const before = await taskCount();
    const { body } = await agent.rpc('SendMessage', { message: userMessage('hello there') }, V1);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(
      /"hello there" names no skill: start the text with one of export, sleep/,
    );
    expect(body.error.message).toContain('e.g. "export 5000 rows"');
    // v0.3 callers get the same answer.
    const legacy = await agent.rpc('message/send', {
      message: legacyMessage([{ kind: 'text', text: 'please do the thing' }]),
    });
    expect(legacy.body.error.code).toBe(-32602);
    expect(legacy.body.error.message).toContain('names no skill');
    expect(await taskCount()).toBe(before);

    const sent = await agent.rpc('SendMessage', { message: userMessage('Export 3 rows') }, V1);
    const task = sent.body.result.task;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(csvLines(artifactText(task.artifacts[0]))).toHaveLength(4); // header and 3 rows
  });

  it('refuses a v1.0 message without a role, saying which to send', async () => {
    const { role: _role, ...roleless } = skillMessage('sleep', { seconds: 0 });
    const { body } = await agent.rpc('SendMessage', { message: roleless }, V1);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain('message.role is required: send "ROLE_USER"');
  });
});
