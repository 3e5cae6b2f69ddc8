import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, skillMessage, startTask, V1 } from './a2a.js';
import { type Agent, launch } from './harness.js';
import { type Receiver, startReceiver } from './webhook-receiver.js';

interface StoredSecrets {
  token: string | null;
  auth_credentials: string | null;
}

describe('webhook secrets at rest', () => {
  const agents: Agent[] = [];
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  /**
   * An agent whose one runner is busy with a long sleep (`blocker`), a receiver, and an export that
   * waits behind the sleep, so that a webhook registered for it hears of its end only once unblocked.
   */
  async function parkedExport() {
    const agent = await launch({ env: { PUSH_ALLOW: '127.0.0.0/8', RUNNER_CONCURRENCY: '1' } });
    agents.push(agent);
    const hook = await startReceiver();
    receivers.push(hook);
    const blocker = await startTask(agent, skillMessage('sleep', { seconds: 600 }));
    await agent.waitForState(blocker.id, 'TASK_STATE_WORKING');
    const task = await startTask(agent, skillMessage('export', { rows: 1 }));
    return { agent, hook, blocker, task };
  }

  it('token and credentials are stored sealed, a row stored before sealing still works, and both are sent in clear', async () => {
    const { agent, hook, blocker, task } = await parkedExport();
    const created = await agent.rpc(
      'CreateTaskPushNotificationConfig',
      {
        taskId: task.id,
        url: hook.url(),
        token: 'tok-secret',
        authentication: { scheme: 'Bearer', credentials: 'cred-secret' },
      },
      V1,
    );
    expect(created.body.error).toBeUndefined();

    // What a copy of the database shows.
    const db = new Database(agent.dbPath);
    db.pragma('busy_timeout = 5000');
    try {
      const row = db
        .prepare('SELECT token, auth_credentials FROM push_configs WHERE task_id = ?')
        .get(task.id) as StoredSecrets;
      expect(row.token).toMatch(/^sealed:v1:/);
      expect(row.auth_credentials).toMatch(/^sealed:v1:/);
      expect(JSON.stringify(row)).not.toMatch(/tok-secret|cred-secret/);
      // As a server before sealing existed would have stored it.
      db.prepare("UPDATE push_configs SET token = 'legacy-token' WHERE task_id = ?").run(task.id);
    } finally {
      db.close();
    }

    await agent.rpc('CancelTask', { id: blocker.id }, V1);
    const [n] = await hook.waitFor((all) => all.length >= 1);
    expect(n?.status).toBe(200);
    expect(n?.headers['x-a2a-notification-token']).toBe('legacy-token');
    expect(n?.headers.authorization).toBe('Bearer cred-secret');
  });

  it('a secret that does not unseal (another KEYS_DIR sealed it) dead-letters its notification, saying why', async () => {
    const { agent, hook, blocker, task } = await parkedExport();
    await agent.rpc('CreateTaskPushNotificationConfig', { taskId: task.id, url: hook.url(), token: 't' }, V1);
    const db = new Database(agent.dbPath);
    db.pragma('busy_timeout = 5000');
    try {
      const foreign = `sealed:v1:${Buffer.alloc(40, 7).toString('base64url')}`;
      db.prepare('UPDATE push_configs SET token = ? WHERE task_id = ?').run(foreign, task.id);
    } finally {
      db.close();
    }

    await agent.rpc('CancelTask', { id: blocker.id }, V1);
    const dead = await eventually(async () =>
      agent.logs.find((l) => l.msg === 'push: dead-lettered' && l.taskId === task.id),
    );
    expect(String(dead.error)).toContain("the webhook's token cannot be unsealed");
    expect(String(dead.error)).toContain('every instance must read the same KEYS_DIR');
    expect(hook.received).toHaveLength(0);
  });
});
