import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, skillMessage, startTask } from './a2a.js';
import { type Agent, launch, serveExpectingExit } from './harness.js';

/** An allow-list with one command: node printing a greeting for a validated name. */
function commandsFile(entries: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'taskhandle-commands-')), 'commands.json');
  writeFileSync(file, JSON.stringify(entries));
  return file;
}

describe('the command skill, configured by COMMANDS_FILE', () => {
  let agent: Agent;
  beforeAll(async () => {
    const file = commandsFile([
      {
        name: 'greet',
        argv: [process.execPath, '-e', 'console.log("hello " + process.argv[1])', '{who}'],
        params: { who: { pattern: '[a-z]+', required: true } },
      },
    ]);
    agent = await launch({ env: { COMMANDS_FILE: file } });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  it('runs an allow-listed command with a validated parameter, its output as an artifact', async () => {
    const task = await startTask(
      agent,
      skillMessage('command', { command: 'greet', params: { who: 'ada' } }),
    );
    await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
    const done = await getTask(agent, task.id);
    expect(done.status.message.parts[0].text).toMatch(/greet.*exited 0/);
    const parts: { text?: string }[] = done.artifacts.flatMap((a: { parts: { text?: string }[] }) => a.parts);
    const output = parts.map((p) => p.text ?? '').join('');
    expect(output).toContain('hello ada');
  });

  it('refuses a command outside the allow-list, or a parameter failing its pattern, before any task', async () => {
    const other = await agent.rpc(
      'SendMessage',
      { message: skillMessage('command', { command: 'rm', params: {} }) },
      { version: '1.0' },
    );
    expect(other.body.error.code).toBe(-32602);
    const injected = await agent.rpc(
      'SendMessage',
      { message: skillMessage('command', { command: 'greet', params: { who: 'ada; rm -rf /' } }) },
      { version: '1.0' },
    );
    expect(injected.body.error.code).toBe(-32602);
    expect(injected.body.error.message).toMatch(/who/);
  });

  it('a malformed COMMANDS_FILE stops the start, naming it (exit 78)', async () => {
    const { code, stderr } = await serveExpectingExit({ COMMANDS_FILE: commandsFile([{ name: 'x' }]) });
    expect(code).toBe(78);
    expect(stderr).toMatch(/COMMANDS_FILE=/);
  });
});
