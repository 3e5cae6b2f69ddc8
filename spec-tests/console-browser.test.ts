import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMessage, startTask } from './a2a.js';
import { launchBrowser, noBrowser, pageErrors } from './browser.js';
import { type Agent, launch } from './harness.js';

/** Waits for what the page shows after a round trip to the server (slow on a loaded machine). */
const ROUND_TRIP = { timeout: 10_000 };

/** Records every Content-Security-Policy violation of the page, before any of its scripts runs. */
const WATCH_CSP = `window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`;
const violations = (page: Page) => page.evaluate<string[]>('window.__csp');

if (noBrowser) console.warn(noBrowser);

describe.skipIf(noBrowser !== undefined)('the operator console in a real browser (chromium)', () => {
  let browser: Browser;
  let agent: Agent;
  beforeAll(async () => {
    browser = await launchBrowser();
    agent = await launch({
      apiKeys: { alice: 'acme', root: 'ops' },
      env: { OPERATORS: 'ops/root', RUNNER_POLL_MS: '100' },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await agent?.stop();
  });

  it('loads, filters, opens a task, follows it live, shows markup as text, and breaks no CSP rule', async () => {
    const alice = agent.as('alice');
    const markup = '<img src=x onerror="document.title=\'pwned\'"><b>bold</b>';
    const waiting = await startTask(
      alice,
      skillMessage('approval', { action: markup, approver: 'acme/bob' }),
    );
    const sleeping = await startTask(alice, skillMessage('sleep', { seconds: 600 }));
    await alice.waitForState(waiting.id, 'TASK_STATE_INPUT_REQUIRED');
    await alice.waitForState(sleeping.id, 'TASK_STATE_WORKING');

    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const errors = pageErrors(page);
    await page.addInitScript(WATCH_CSP);
    await page.goto(`${agent.url}/console`);
    // The page's first call is anonymous: this server wants credentials.
    const field = page.getByLabel('Credential', { exact: true });
    await field.fill(agent.keys.root as string);
    await field.press('Enter');
    await page.getByRole('heading', { name: 'Tasks' }).waitFor(ROUND_TRIP);

    const rows = page.locator('#rows tr');
    await expect.poll(() => rows.count(), ROUND_TRIP).toBe(2);
    expect(await page.locator('#counts').textContent()).toContain('input-required');
    // The four charts, drawn on canvas by uPlot from this server.
    await expect.poll(() => page.locator('#charts canvas').count(), ROUND_TRIP).toBe(4);

    // A task made while the list is open appears without a reload (SSE).
    const third = await startTask(alice, skillMessage('sleep', { seconds: 600 }));
    await expect.poll(() => rows.count(), ROUND_TRIP).toBe(3);
    expect(await page.locator(`#rows tr[data-id="${third.id}"]`).count()).toBe(1);

    await page.locator('#f-state').selectOption('input-required');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows.count(), ROUND_TRIP).toBe(1);
    expect(await rows.first().getAttribute('data-id')).toBe(waiting.id);

    // The approval's question holds markup: shown as text, never run.
    await page.getByRole('link', { name: waiting.id }).click();
    await page.locator('#task-fields').getByText('acme/alice').waitFor(ROUND_TRIP);
    expect(await page.locator('#task-fields').textContent()).toContain(markup);
    expect(await page.locator('#task-fields img, #timeline img, #task-fields b').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');

    // Another task's page, changed from elsewhere (its owner cancels over A2A): it follows live.
    await page.goto(`${agent.url}/console#task/${encodeURIComponent(sleeping.id)}`);
    await page.locator('#task-fields').getByText('working', { exact: true }).waitFor(ROUND_TRIP);
    const { body } = await alice.rpc('CancelTask', { id: sleeping.id }, { version: '1.0' });
    expect(body.result.status.state).toBe('TASK_STATE_CANCELED');
    await page.locator('#task-fields').getByText('canceled', { exact: true }).waitFor(ROUND_TRIP);
    await page.locator('#timeline .state.canceled').waitFor(ROUND_TRIP);
    expect(await page.locator('#cancel').isHidden()).toBe(true);

    // The operator cancels the third from its page.
    await page.goto(`${agent.url}/console#task/${encodeURIComponent(third.id)}`);
    await page.getByRole('button', { name: 'Cancel this task' }).click();
    await expect.poll(() => page.getByRole('status').textContent(), ROUND_TRIP).toContain('canceled');
    await alice.waitForState(third.id, 'TASK_STATE_CANCELED');

    expect(await violations(page)).toEqual([]);
    expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
    await page.close();
  }, 60_000);

  it('tells a signed-in principal that is not an operator what to do', async () => {
    const page = await browser.newPage();
    await page.addInitScript(WATCH_CSP);
    await page.goto(`${agent.url}/console`);
    const field = page.getByLabel('Credential', { exact: true });
    await field.fill(agent.keys.alice as string);
    await field.press('Enter');
    await expect
      .poll(() => page.getByRole('status').textContent(), ROUND_TRIP)
      .toContain('acme/alice is not one');
    expect(await page.locator('#overview').isHidden()).toBe(true);
    expect(await violations(page)).toEqual([]);
    await page.close();
  });
});
