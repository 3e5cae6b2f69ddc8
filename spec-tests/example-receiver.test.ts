import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';

const RECEIVER = fileURLToPath(new URL('../examples/webhook-receiver.mjs', import.meta.url));

/** The README's receiver, as a user runs it: one JSON line per notification on stdout. */
function startReceiver(agentUrl: string) {
  const proc = spawn(process.execPath, [RECEIVER], {
    env: { ...process.env, AGENT_URL: agentUrl, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // biome-ignore lint/suspicious/noExplicitAny: printed lines are inspected freely
  const lines: any[] = [];
  const waiters: (() => void)[] = [];
  createInterface({ input: proc.stdout }).on('line', (line) => {
    lines.push(JSON.parse(line));
    for (const wake of waiters.splice(0)) wake();
  });
  // biome-ignore lint/suspicious/noExplicitAny: see above
  const waitFor = async (found: (line: any) => boolean, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = lines.find(found);
      if (line) return line;
      if (Date.now() > deadline) throw new Error(`receiver printed no such line: ${JSON.stringify(lines)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  };
  return { proc, lines, waitFor };
}

describe('examples/webhook-receiver.mjs (the README walk-through)', () => {
  let agent: Agent;
  let receiver: ReturnType<typeof startReceiver>;
  let hook: string;

  beforeAll(async () => {
    agent = await launch({ env: { PUSH_ALLOW: '127.0.0.1' } });
    receiver = startReceiver(agent.url);
    hook = `${(await receiver.waitFor((l) => l.listening)).listening}/hook`;
  });

  afterAll(async () => {
    (receiver.proc as ChildProcess).kill();
    await agent.stop();
  });

  it('verifies the one completed notification of an export it registered for, with its token', async () => {
    // Long enough (a 1.5 s pause between its two chunks) that the webhook is registered before it
    // ends, also on a loaded machine: a task that ended first would owe this webhook nothing.
    const task = await startTask(agent, skillMessage('export', { rows: 20, chunkRows: 10, delayMs: 1500 }));
    const created = await agent.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId: task.id, url: hook, token: 'my-secret-token' },
      V1,
    );
    expect(created.body.result).toMatchObject({
      id: 'default',
      taskId: task.id,
      url: hook,
      token: '********',
    });
    const line = await receiver.waitFor((l) => l.body?.statusUpdate?.taskId === task.id);
    expect(line).toMatchObject({ verified: true, repeat: false, token: 'my-secret-token' });
    expect(line.body.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    // The next task's notification arrives after it: nothing more came for the first one.
    const { task: next } = await send(agent, skillMessage('export', { rows: 1 }), {
      returnImmediately: true,
      taskPushNotificationConfig: { url: hook },
    });
    await receiver.waitFor((l) => l.body?.statusUpdate?.taskId === next.id);
    expect(receiver.lines.filter((l) => l.body?.statusUpdate?.taskId === task.id)).toHaveLength(1);
    expect(receiver.lines.every((l) => l.verified !== false)).toBe(true);
  });
});
