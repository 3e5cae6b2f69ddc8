import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, launch, userMessage } from './harness.js';

describe('a handle comes back at once', () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch();
  });
  afterAll(async () => {
    await agent.stop();
  });

  it('returns a non-terminal handle for a 10-minute export (600 chunks, 1 s apart)', async () => {
    const { body } = await agent.rpc(
      'SendMessage',
      {
        message: userMessage('export', {
          parts: [{ data: { skill: 'export', input: { rows: 600, chunkRows: 1, delayMs: 1000 } } }],
        }),
        configuration: { returnImmediately: true },
      },
      { version: '1.0' },
    );
    const task = body.result.task;
    expect(['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']).toContain(task.status.state);
    const handle = task.metadata['https://taskhandle.dev/extensions/task-handle/v1'];
    // Anonymous (no authentication configured): the export's 7 days are capped by
    // ANONYMOUS_MAX_TTL_MS (24 h); authenticated callers get the 7 days (jsonrpc-v1.test.ts).
    expect(handle).toMatchObject({ pollIntervalMs: 2000, ttlMs: 86_400_000 });
    const canceled = await agent.rpc('CancelTask', { id: task.id }, { version: '1.0' });
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
  });
});
