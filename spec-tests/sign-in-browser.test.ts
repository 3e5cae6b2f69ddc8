import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, noBrowser, pageErrors } from './browser.js';
import { type Agent, launch } from './harness.js';

/** `CONSOLE_SCREENSHOT=1 npx vitest run spec-tests/sign-in-browser.test.ts` renews docs/console.md's picture. */
const DOCS_SCREENSHOT = process.env.CONSOLE_SCREENSHOT
  ? fileURLToPath(new URL('../docs/console-sign-in.png', import.meta.url))
  : undefined;

/** Waits for what the page shows after a round trip to the server (slow on a loaded machine). */
const ROUND_TRIP = { timeout: 10_000 };

/** A desk's window and a phone's screen. */
const WIDTHS = [1280, 390];

/** Computed styles of a control, by property (those LOOK reads). */
type Computed = Record<'fontSize' | 'fontFamily' | 'paddingTop' | 'paddingLeft', string> &
  Record<string, string>;

/** What makes a sign-in form look as the kit (kit.css) styles it, read from the page. */
interface SignInLook {
  input: Computed;
  button: Computed;
  label: string;
  bodyFont: string;
  inputWidth: number;
  formWidth: number;
  scrollWidth: number;
  clientWidth: number;
}

// Evaluated in the page (as a string: the tests' TypeScript knows no DOM).
const LOOK = `(() => {
  const pick = (el, names) => Object.fromEntries(names.map((n) => [n, getComputedStyle(el)[n]]));
  const input = document.getElementById('credential');
  const button = document.querySelector('#sign-in-form button');
  return {
    input: pick(input, ['fontSize', 'fontFamily', 'paddingTop', 'paddingLeft', 'boxSizing', 'outlineStyle', 'outlineColor']),
    button: pick(button, ['fontSize', 'fontFamily', 'paddingTop', 'paddingLeft', 'marginTop', 'cursor']),
    label: getComputedStyle(document.querySelector('label[for="credential"]')).display,
    bodyFont: getComputedStyle(document.body).fontSize,
    inputWidth: input.getBoundingClientRect().width,
    formWidth: document.getElementById('sign-in-form').getBoundingClientRect().width,
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  };
})()`;

if (noBrowser) console.warn(noBrowser);

describe.skipIf(noBrowser !== undefined)('signing in on the console and the inbox (chromium)', () => {
  let browser: Browser;
  let agent: Agent;
  // SIGN_IN_SCREENSHOTS=<folder> keeps the pictures there; else they go to a temporary folder.
  const keep = process.env.SIGN_IN_SCREENSHOTS;
  const shots = keep ?? mkdtempSync(join(tmpdir(), 'taskhandle-sign-in-'));
  beforeAll(async () => {
    browser = await launchBrowser();
    agent = await launch({ apiKeys: { bob: 'acme', root: 'ops' }, env: { OPERATORS: 'ops/root' } });
  });
  afterAll(async () => {
    await browser?.close();
    await agent?.stop();
    if (!keep) rmSync(shots, { recursive: true, force: true });
  });

  /** The page's sign-in as it looks (the focus in the field, as the page puts it), with a screenshot. */
  async function signInLook(page: Page, face: string, width: number): Promise<SignInLook> {
    await page.goto(`${agent.url}/${face}`);
    await page.getByLabel('Credential', { exact: true }).waitFor(ROUND_TRIP);
    await page.screenshot({ path: join(shots, `${face}-sign-in-${width}.png`), fullPage: true });
    if (DOCS_SCREENSHOT && face === 'console' && width === 390)
      await page.screenshot({ path: DOCS_SCREENSHOT });
    return page.evaluate<SignInLook>(LOOK);
  }

  for (const width of WIDTHS) {
    it(`at ${width} px: the console's sign-in is the inbox's, styled, with no sideways scroll; both sign in`, async () => {
      const looks: Record<string, SignInLook> = {};
      for (const [face, who, heading] of [
        ['console', 'root', 'Tasks'],
        ['inbox', 'bob', 'Waiting for you'],
      ] as const) {
        const page = await browser.newPage({ viewport: { width, height: 800 } });
        const errors = pageErrors(page);
        const look = await signInLook(page, face, width);
        looks[face] = look;
        // Not the browser's defaults (13.33 px controls, 1 px 2 px padding, an inline label).
        expect(look.input.fontSize, face).toBe(look.bodyFont);
        expect(look.button.fontSize, face).toBe(look.bodyFont);
        expect(Number.parseFloat(look.input.paddingTop), face).toBeGreaterThan(4);
        expect(Number.parseFloat(look.button.paddingLeft), face).toBeGreaterThan(8);
        expect(look.label, face).toBe('block');
        // The field fills the form, and the form fits the window: nothing scrolls sideways.
        expect(Math.round(look.inputWidth), face).toBe(Math.round(look.formWidth));
        expect(look.formWidth, face).toBeLessThanOrEqual(Math.min(width, 52 * 16));
        expect(look.scrollWidth, face).toBeLessThanOrEqual(look.clientWidth);

        const field = page.getByLabel('Credential', { exact: true });
        await field.fill(agent.keys[who] as string);
        await field.press('Enter');
        await page.getByRole('heading', { name: heading }).waitFor(ROUND_TRIP);
        await page.screenshot({ path: join(shots, `${face}-signed-in-${width}.png`) });
        const after = await page.evaluate<SignInLook>(LOOK);
        expect(after.scrollWidth, `${face} signed in`).toBeLessThanOrEqual(after.clientWidth);
        // The page's first call is anonymous (it works on agents without auth): its 401 is expected.
        expect(errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
        await page.close();
      }
      // One kit: the same look on both pages.
      expect(looks.console).toEqual(looks.inbox);
    }, 60_000);
  }
});
