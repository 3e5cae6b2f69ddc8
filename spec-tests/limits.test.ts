import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMessage, V1 } from './a2a.js';
import { type Agent, apiKeyHeader, hashApiKey, launch, newApiKey } from './harness.js';

/** A keys file where `ops` may use only the `sleep` skill, and `admin` any. */
function keysWithSkills() {
  const dir = mkdtempSync(join(tmpdir(), 'taskhandle-limits-'));
  const file = join(dir, 'api-keys.json');
  const ops = newApiKey();
  const admin = newApiKey();
  const entries = [
    { principal: 'ops', tenant: 'acme', keyHash: hashApiKey(ops), skills: ['sleep'] },
    { principal: 'admin', tenant: 'acme', keyHash: hashApiKey(admin) },
  ];
  writeFileSync(file, JSON.stringify(entries), { mode: 0o600 });
  return { file, ops, admin };
}

describe('per-principal limits: unfinished tasks (MAX_ACTIVE_TASKS) and skills (keys file)', () => {
  let agent: Agent;
  let keys: ReturnType<typeof keysWithSkills>;
  beforeAll(async () => {
    keys = keysWithSkills();
    agent = await launch({
      as: null,
      env: { API_KEYS_FILE: keys.file, MAX_ACTIVE_TASKS: '2', SHUTDOWN_TIMEOUT_MS: '200' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const start = (key: string, skill: string, messageId = crypto.randomUUID()) =>
    agent.as(apiKeyHeader(key)).rpc(
      'SendMessage',
      {
        message: skillMessage(skill, skill === 'sleep' ? { seconds: 600 } : { rows: 1 }, { messageId }),
        configuration: { returnImmediately: true },
      },
      V1,
    );

  it('refuses a skill the key may not use: -32052 on JSON-RPC, 403 on REST, and makes nothing', async () => {
    const refused = await start(keys.ops, 'export');
    expect(refused.body.error).toMatchObject({ code: -32052, message: 'You may not use the skill "export"' });
    const rest = await fetch(`${agent.url}/rest/message:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...apiKeyHeader(keys.ops) },
      body: JSON.stringify({
        message: skillMessage('export', { rows: 1 }),
        configuration: { returnImmediately: true },
      }),
    });
    expect(rest.status).toBe(403);
    expect(((await rest.clone().json()) as { error: { status: string } }).error.status).toBe(
      'PERMISSION_DENIED',
    );
    const list = await agent.as(apiKeyHeader(keys.ops)).rpc('ListTasks', { pageSize: 10 }, V1);
    expect(list.body.result.totalSize ?? 0).toBe(0);
    // The admin key has no skill list: every skill.
    expect((await start(keys.admin, 'export')).body.result.task.id).toBeTruthy();
  });

  it('refuses a new task over MAX_ACTIVE_TASKS: -32053 on JSON-RPC, 429 with Retry-After on REST; a finished one frees a slot', async () => {
    const first = (await start(keys.ops, 'sleep')).body.result.task;
    const second = (await start(keys.ops, 'sleep')).body.result.task;
    const third = await start(keys.ops, 'sleep');
    expect(third.body.error.code).toBe(-32053);
    expect(third.body.error.message).toMatch(/unfinished tasks/);
    const rest = await fetch(`${agent.url}/rest/message:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...apiKeyHeader(keys.ops) },
      body: JSON.stringify({
        message: skillMessage('sleep', { seconds: 600 }),
        configuration: { returnImmediately: true },
      }),
    });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // A retry of a message already delivered is not a new task: it still answers.
    const again = await start(keys.ops, 'sleep', second.history[0].messageId);
    expect(again.body.result.task.id).toBe(second.id);
    // Another principal has its own count.
    expect((await start(keys.admin, 'sleep')).body.result.task.id).toBeTruthy();
    // Ending one frees a slot.
    await agent.as(apiKeyHeader(keys.ops)).rpc('CancelTask', { id: first.id }, V1);
    expect((await start(keys.ops, 'sleep')).body.result.task.id).toBeTruthy();
  });
});

describe("sizes of what a task keeps in its record: metadata (MAX_METADATA_BYTES) and a webhook's fields", () => {
  let agent: Agent;
  beforeAll(async () => {
    agent = await launch({
      env: { MAX_METADATA_BYTES: '1000', PUSH_ALLOW: '127.0.0.0/8', SHUTDOWN_TIMEOUT_MS: '200' },
    });
  });
  afterAll(async () => {
    await agent?.stop();
  });

  const withMetadata = (bytes: number) => ({
    message: skillMessage('sleep', { seconds: 30 }),
    configuration: { returnImmediately: true },
    // {"note":"…"} is 11 bytes around its text.
    metadata: { note: 'm'.repeat(bytes - 11) },
  });

  it('refuses task metadata past MAX_METADATA_BYTES: -32602 on JSON-RPC, 400 on REST, saying the size and the setting', async () => {
    const message = 'metadata is 1001 bytes as JSON, more than the 1000 a task keeps (MAX_METADATA_BYTES)';
    const refused = await agent.rpc('SendMessage', withMetadata(1001), V1);
    expect(refused.body.error.code).toBe(-32602);
    expect(refused.body.error.message).toContain(message);
    const rest = await fetch(`${agent.url}/rest/message:send`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify(withMetadata(1001)),
    });
    expect(rest.status).toBe(400);
    expect(((await rest.json()) as { error: { message: string } }).error.message).toContain(message);
    const kept = await agent.rpc('SendMessage', withMetadata(1000), V1);
    expect(kept.body.result.task.metadata).toMatchObject({ note: 'm'.repeat(989) });
  });

  it('refuses a webhook field longer than it may be (url, token, credentials), naming the field and its bound', async () => {
    const task = (await agent.rpc('SendMessage', withMetadata(100), V1)).body.result.task;
    const url = 'http://127.0.0.1:9/hook';
    const cases: [Record<string, unknown>, string][] = [
      [{ url: `${url}?${'q'.repeat(2048)}` }, /url is \d+ characters long, more than the 2048/.source],
      [{ url, token: 't'.repeat(1025) }, 'token is 1025 characters long, more than the 1024 it may be'],
      [
        { url, authentication: { scheme: 'Bearer', credentials: 'c'.repeat(4097) } },
        'authentication.credentials is 4097 characters long, more than the 4096 it may be',
      ],
    ];
    for (const [config, words] of cases) {
      const refused = await agent.rpc('CreateTaskPushNotificationConfig', { taskId: task.id, ...config }, V1);
      expect(refused.body.error?.code).toBe(-32602);
      expect(refused.body.error.message).toMatch(new RegExp(words));
    }
    const ok = await agent.rpc(
      'CreateTaskPushNotificationConfig',
      { taskId: task.id, url, token: 't'.repeat(1024) },
      V1,
    );
    expect(ok.body.error).toBeUndefined();
  });
});
