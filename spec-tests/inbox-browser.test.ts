import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { send, skillMessage } from './a2a.js';
import { freePort, launchBrowser, noBrowser, pageErrors } from './browser.js';
import { type Agent, launch, tempDbPath } from './harness.js';
import { type Received, type Receiver, startReceiver } from './webhook-receiver.js';

/** `INBOX_SCREENSHOT=1 npx vitest run spec-tests/inbox-browser.test.ts` renews the README's picture. */
const SCREENSHOT = process.env.INBOX_SCREENSHOT
  ? fileURLToPath(new URL('../docs/inbox.png', import.meta.url))
  : undefined;

const stateOf = (r: Received): string | undefined => {
  const body = JSON.parse(r.body);
  return body.statusUpdate?.status?.state ?? body.task?.status?.state ?? body.status?.state;
};

if (noBrowser) console.warn(noBrowser);

describe.skipIf(noBrowser !== undefined)('the approvals inbox in a real browser (chromium)', () => {
  let browser: Browser;
  const agents: Agent[] = [];
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((a) => a.stop()));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  const start = async (o: Parameters<typeof launch>[0] = {}) => {
    const agent = await launch(o);
    agents.push(agent);
    return agent;
  };

  /** The page's first call is anonymous (it works on agents without auth): its 401 is expected. */
  const unexpected = (errors: string[]) => errors.filter((e) => !/status of 401/.test(e));

  /** Opens the inbox, signs in with `key` and waits for the list. */
  async function signIn(url: string, key: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 900, height: 600 } });
    const errors = pageErrors(page);
    await page.goto(`${url}/inbox`);
    const field = page.getByLabel('Credential', { exact: true });
    await field.fill(key);
    // From the keyboard: Enter in the field submits the form.
    await field.press('Enter');
    await page.getByRole('heading', { name: 'Waiting for you' }).waitFor();
    return { page, errors };
  }

  const askApproval = async (agent: Agent, action: string, configuration: Record<string, unknown> = {}) => {
    const message = skillMessage('approval', { action, approver: 'acme/bob' });
    const { task } = await send(agent, message, { returnImmediately: true, ...configuration });
    await agent.waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
    return String(task.id);
  };

  it('bob approves in the inbox; alice sees the task completed and her webhook got both notifications', async () => {
    const hook = await startReceiver();
    receivers.push(hook);
    const agent = await start({
      apiKeys: { alice: 'acme', bob: 'acme', carol: 'acme' },
      env: { PUSH_ALLOW: '127.0.0.1', PUSH_POLL_MS: '50', RUNNER_POLL_MS: '100' },
    });
    const bobKey = agent.keys.bob as string;
    const { page, errors } = await signIn(agent.url, bobKey);
    await expect.poll(() => page.locator('#who').textContent()).toBe('Signed in as acme/bob');
    await expect.poll(() => page.locator('#summary').textContent()).toBe('Nothing waits for you.');

    // Asked while bob's page is open: the list follows over SSE, with no reload.
    const id = await askApproval(agent, 'Deploy v2 to production', {
      taskPushNotificationConfig: { url: hook.url('/hook') },
    });
    const item = page.getByRole('listitem').filter({ hasText: 'Deploy v2 to production' });
    await item.waitFor({ timeout: 10_000 });
    expect(await item.textContent()).toContain('asked by acme/alice');
    expect(await item.locator('.prompt').textContent()).toMatch(
      /^Approve or reject: Deploy v2 to production/,
    );
    if (SCREENSHOT) {
      mkdirSync(dirname(SCREENSHOT), { recursive: true });
      await page.screenshot({ path: SCREENSHOT });
    }

    await item.getByLabel('Comment (optional)').fill('ship it');
    await item.getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Approved');
    await expect.poll(() => page.locator('#summary').textContent()).toBe('Nothing waits for you.');

    const done = await agent.waitForState(id, 'TASK_STATE_COMPLETED');
    expect(done.status.message.parts[0].text).toBe('Approved by acme/bob: ship it');
    const got = await hook.waitFor((all) => all.some((r) => stateOf(r) === 'TASK_STATE_COMPLETED'));
    const states = got.map(stateOf);
    expect(states).toContain('TASK_STATE_INPUT_REQUIRED');
    expect(states.indexOf('TASK_STATE_INPUT_REQUIRED')).toBeLessThan(states.indexOf('TASK_STATE_COMPLETED'));
    for (const r of got) await hook.verify(agent.url, r);
    expect(unexpected(errors)).toEqual([]);
    await page.close();
  });

  it('a task that waits across a restart is still answered from the open page afterwards', async () => {
    // The same port across the restart, so the open page reconnects to the new process.
    const port = String(await freePort());
    const dbPath = tempDbPath();
    const first = await start({ apiKeys: { alice: 'acme', bob: 'acme' }, dbPath, env: { PORT: port } });
    const id = await askApproval(first, 'Migrate the billing tables');
    const { page, errors } = await signIn(first.url, first.keys.bob as string);
    const item = page.getByRole('listitem').filter({ hasText: 'Migrate the billing tables' });
    await item.waitFor();

    await first.stop();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('reconnecting');
    // Same keys file, same database, same port: the same principals see the same tasks.
    const second = await start({ dbPath, env: { PORT: port, API_KEYS_FILE: first.keysFile as string } });
    expect(second.url).toBe(first.url);
    await expect.poll(() => page.getByRole('status').textContent(), { timeout: 20_000 }).toBe('Reconnected.');

    await item.getByRole('button', { name: 'Reject' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Rejected');
    // `first` still holds alice's key and calls the same address: the restarted server.
    const final = await first.waitForState(id, 'TASK_STATE_REJECTED');
    expect(final.status.message.parts[0].text).toBe('Rejected by acme/bob');
    // The page's dropped stream is a network failure the browser logs; nothing else may be.
    expect(unexpected(errors).filter((e) => !/ERR_CONNECTION_REFUSED|network/i.test(e))).toEqual([]);
    await page.close();
  });
  it('shows what a requester wrote as text: markup in an action is never run or rendered', async () => {
    const agent = await start({ apiKeys: { alice: 'acme', bob: 'acme' } });
    const action = '<img src=x onerror="document.title=\'pwned\'"><b>bold</b>';
    await askApproval(agent, action);
    const { page, errors } = await signIn(agent.url, agent.keys.bob as string);
    const prompt = page.locator('#tasks .prompt');
    await prompt.waitFor();
    expect(await prompt.textContent()).toContain(action);
    expect(await page.locator('#tasks img, #tasks b').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');
    expect(unexpected(errors)).toEqual([]);
    await page.close();
  });
});
