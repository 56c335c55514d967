// Browser helpers for the console tests: Debian's Chromium driven by playwright-core with no network
// beyond this machine, sign-in, an axe-core check and a screenshot per test.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Browser, Page } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';
const screenshots = path.join(import.meta.dirname, '..', '..', '.screenshots');

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
}

/** A page whose requests beyond 127.0.0.1 are refused and listed in `elsewhere`, and whose console errors are kept. */
export async function openPage(browser: Browser): Promise<{ page: Page; elsewhere: string[]; problems: string[] }> {
  // axe-core needs a page of an explicit context.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const elsewhere: string[] = [];
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || url.protocol === 'blob:' || url.hostname === '127.0.0.1') return route.continue();
    elsewhere.push(url.href);
    return route.abort();
  });
  return { page, elsewhere, problems };
}

/** Opens /console (or `at`) and signs in with `token` through the form. */
export async function signIn(page: Page, origin: string, token: string, at = '/console/'): Promise<void> {
  await page.goto(`${origin}${at}`);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
}

/** axe-core on the page as it is: the serious and critical violations (expected none). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, `console-${name}.png`), fullPage: true });
}
