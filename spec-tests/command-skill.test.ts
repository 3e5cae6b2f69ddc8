import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTask, HANDLE, skillMessage, startTask } from './a2a.js';
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

describe('the progress of a command task that ended', () => {
  const file = commandsFile([
    { name: 'hello', argv: [process.execPath, '-e', 'console.log("hello")'] },
    { name: 'fail', argv: [process.execPath, '-e', 'process.exit(3)'] },
    // Long enough to be caught running by a kill -9 of the server; ended by the test itself.
    { name: 'linger', argv: [process.execPath, '-e', 'setTimeout(() => {}, 60000)'] },
  ]);
  const env = { COMMANDS_FILE: file, LEASE_MS: '1000', RUNNER_POLL_MS: '100' };
  const progressOf = async (agent: Agent, id: string) => (await getTask(agent, id)).metadata[HANDLE].progress;

  it('says the command exited 0 once it completed, not "running (pid ...)"', async () => {
    const agent = await launch({ env });
    try {
      const task = await startTask(agent, skillMessage('command', { command: 'hello' }));
      await agent.waitForState(task.id, 'TASK_STATE_COMPLETED');
      expect((await progressOf(agent, task.id)).message).toBe('exited 0, 6 bytes of output');
    } finally {
      await agent.stop();
    }
  });

  it('says the command failed and why, not "running (pid ...)"', async () => {
    const agent = await launch({ env });
    try {
      const task = await startTask(agent, skillMessage('command', { command: 'fail' }));
      await agent.waitForState(task.id, 'TASK_STATE_FAILED');
      expect((await progressOf(agent, task.id)).message).toBe('failed: fail exited with code 3');
    } finally {
      await agent.stop();
    }
  });

  it('says so after a restart failed the command that a kill -9 interrupted', async () => {
    const first = await launch({ env });
    let pgid: number | undefined;
    try {
      const task = await startTask(first, skillMessage('command', { command: 'linger' }));
      const running = await eventually(async () => {
        const message = (await progressOf(first, task.id))?.message;
        return /running \(pid \d+\)/.test(message ?? '') ? message : undefined;
      });
      pgid = Number(/pid (\d+)/.exec(running)?.[1]);
      await first.kill9();
      const second = await launch({ env, dbPath: first.dbPath });
      try {
        const failed = await second.waitForState(task.id, 'TASK_STATE_FAILED');
        const progress = failed.metadata[HANDLE].progress;
        expect(progress.message).toMatch(/^failed: /);
        expect(progress.message).not.toContain('running');
      } finally {
        await second.stop();
      }
    } finally {
      if (pgid) killGroup(pgid);
    }
  });
});

/** Polls `probe` until it answers something (10 s at most). */
async function eventually<T>(probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('still nothing after 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Ends a command the killed server left behind (its process group). */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
