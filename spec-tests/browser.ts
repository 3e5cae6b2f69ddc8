import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's chromium, as .ci/run installs it (apt-get install chromium). */
export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export const noBrowser: string | undefined = existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is missing: browser tests skipped (install it with: apt-get install -y chromium)`;

/** A headless chromium, without sandbox (CI runs as root) and without calls home. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Collects what the page logs as errors (and uncaught exceptions), for a test to assert none. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  return errors;
}
