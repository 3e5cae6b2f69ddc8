import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page, Route } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { send, skillMessage } from './a2a.js';
import { launchBrowser, noBrowser, pageErrors } from './browser.js';
import { type Agent, freePort, launch, tempDbPath } from './harness.js';
import { type Received, type Receiver, startReceiver } from './webhook-receiver.js';

/** `INBOX_SCREENSHOT=1 npx vitest run spec-tests/inbox-browser.test.ts` renews docs/approvals.md's picture. */
const SCREENSHOT = process.env.INBOX_SCREENSHOT
  ? fileURLToPath(new URL('../docs/inbox.png', import.meta.url))
  : undefined;

const stateOf = (r: Received): string | undefined => {
  const body = JSON.parse(r.body);
  return body.statusUpdate?.status?.state ?? body.task?.status?.state ?? body.status?.state;
};

/** Waits for what the page shows after a round trip to the server (slow on a loaded machine). */
const ROUND_TRIP = { timeout: 10_000 };

/** A phone's screen (the 390 px): the page must fit it without scrolling sideways. */
const PHONE = { width: 390, height: 844 };

// Evaluated in the page (as strings: the tests' TypeScript knows no DOM).
/** The id of the element that has the focus. */
const focused = (page: Page) => page.evaluate<string | undefined>('document.activeElement?.id');
/** How wide the page is, and how wide its window: wider means it scrolls sideways. */
const widths = (page: Page) =>
  page.evaluate<{ scrollWidth: number; clientWidth: number }>(
    '({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth })',
  );

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
    expect(unexpected(errors).filter((e) => !/ERR_CONNECTION_(REFUSED|RESET)|network/i.test(e))).toEqual([]);
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

  it('at phone width: "loading" until the list comes, then no sideways scroll, whole ids, and buttons instead of the text-protocol hint', async () => {
    // Without authentication task ids are 44 characters with no place to break a line.
    const agent = await start();
    const ask = async (message: Record<string, unknown>) => {
      const { task } = await send(agent, message, { returnImmediately: true });
      await agent.waitForState(task.id, 'TASK_STATE_INPUT_REQUIRED');
      return String(task.id);
    };
    const approval = await ask(skillMessage('approval', { action: 'Deploy v2 to production' }));
    // An export past its sign-off limit asks the same question in its own words.
    const exported = await ask(skillMessage('export', { rows: 3, approvalOverRows: 1 }));
    expect(approval).toMatch(/^[0-9a-f]{44}$/);
    // A2A callers answer in text, and are still told how.
    const asked = await agent.waitForState(approval, 'TASK_STATE_INPUT_REQUIRED');
    expect(asked.status.message.parts[0].text).toContain('Answer "approve" or "reject"');

    const page = await browser.newPage({ viewport: PHONE });
    const errors = pageErrors(page);
    // The page's first look at the list is held until the test has seen the page wait for it.
    let hold: ((route: Route) => void) | undefined;
    const held = new Promise<Route>((resolve) => {
      hold = resolve;
    });
    await page.route('**/inbox/api/waiting', (route) => {
      if (hold) hold(route);
      else void route.continue();
      hold = undefined;
    });
    await page.goto(`${agent.url}/inbox`);
    const first = await held;
    // Located by id: an empty status is not displayed, and a role locator would wait for it to show.
    expect(await page.locator('#status').textContent()).toBe('Loading the inbox…');
    expect(await page.locator('#inbox').isHidden()).toBe(true);
    await first.continue();

    const items = page.getByRole('listitem');
    await expect.poll(() => items.count(), ROUND_TRIP).toBe(2);
    expect(await page.locator('#summary').textContent()).toBe('2 tasks waiting.');
    expect(await page.locator('#status').textContent()).toBe('');

    const { scrollWidth, clientWidth } = await widths(page);
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    for (const id of [approval, exported]) {
      const item = items.filter({ hasText: id });
      // The whole id is shown (wrapped, not cut), inside the screen.
      const shown = item.locator('.task-id');
      expect(await shown.textContent()).toBe(id);
      // The list may be drawn again meanwhile (it refreshes on status events): judged on a laid-out box.
      const inside = async () => {
        const box = await shown.boundingBox();
        return box === null ? 'not laid out' : box.x >= 0 && box.x + box.width <= clientWidth;
      };
      await expect.poll(inside, ROUND_TRIP).toBe(true);
      expect(await item.getByRole('heading').textContent()).toContain(id);
      // The text-protocol hint is for A2A callers: the page has buttons.
      expect(await item.textContent()).not.toMatch(/answer "approve"/i);
      await item.getByRole('button', { name: 'Approve' }).waitFor();
      await item.getByRole('button', { name: 'Reject' }).waitFor();
    }
    expect(await items.filter({ hasText: exported }).locator('.prompt').textContent()).toBe(
      'Approve exporting 3 rows as CSV? (more than 1 need sign-off)',
    );

    await items.filter({ hasText: exported }).getByRole('button', { name: 'Approve' }).click();
    await expect.poll(() => page.locator('#status').textContent(), ROUND_TRIP).toContain('Approved');
    await agent.waitForState(exported, 'TASK_STATE_COMPLETED');
    await expect.poll(() => page.locator('#summary').textContent(), ROUND_TRIP).toBe('1 task waiting.');
    expect(unexpected(errors)).toEqual([]);
    await page.close();
  });

  it('a list that cannot be loaded says why and what to do: a refused key, an agent that is down', async () => {
    const port = String(await freePort());
    const dbPath = tempDbPath();
    const first = await start({ apiKeys: { bob: 'acme' }, dbPath, env: { PORT: port } });
    const page = await browser.newPage({ viewport: PHONE });
    const errors = pageErrors(page);
    await page.goto(`${first.url}/inbox`);
    const field = page.getByLabel('Credential', { exact: true });
    await field.fill('th_not-a-key');
    await field.press('Enter');
    const status = page.locator('#status');
    await expect.poll(() => status.textContent(), ROUND_TRIP).toMatch(/^This API key was not accepted/);
    expect(await status.textContent()).toContain('sign in again');
    // Back in the field, ready for the right one.
    expect(await focused(page)).toBe('credential');

    await first.stop();
    await field.fill(first.keys.bob as string);
    await field.press('Enter');
    await expect
      .poll(() => status.textContent(), ROUND_TRIP)
      .toMatch(/^Could not load the inbox: the agent at http:\S+ did not answer \(check that it runs/);
    const again = page.getByRole('button', { name: 'Try again' });
    // The way on is one key away: the focus is on the button.
    expect(await focused(page)).toBe('retry');

    await start({ dbPath, env: { PORT: port, API_KEYS_FILE: first.keysFile as string } });
    await again.click();
    await expect
      .poll(() => page.locator('#summary').textContent(), ROUND_TRIP)
      .toBe('Nothing waits for you.');
    // The button is gone: the focus moves to what it brought.
    expect(await focused(page)).toBe('summary');
    expect(await status.textContent()).toBe('');
    expect(await again.isHidden()).toBe(true);
    expect(unexpected(errors).filter((e) => !/ERR_CONNECTION_(REFUSED|RESET)|network/i.test(e))).toEqual([]);
    await page.close();
  });
});
