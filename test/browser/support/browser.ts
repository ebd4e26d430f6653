import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (package `chromium`); scripts/test.sh installs it when it can. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumPresent = existsSync(chromiumPath);

const screenshotDir = path.join(__dirname, '..', '..', '..', 'screenshots');
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const viewports = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

/** Headless Chromium with nothing running in the background (Playwright gives it a fresh profile). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Reports a CSP violation as a console error, which `watch` turns into a failure. */
const reportCspViolations = `document.addEventListener('securitypolicyviolation', (e) => {
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber);
});`;

export interface WatchedPage {
  page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  problems: string[];
  /** Fails the test if anything went wrong on the page. */
  assertClean(): void;
}

/**
 * A page in a new context that records every console error, uncaught error and CSP violation.
 * `expected` lists console messages a test provokes on purpose (a 401 the browser logs, say).
 */
export async function watchedPage(browser: Browser, options: { viewport?: keyof typeof viewports; expected?: RegExp[] } = {}) {
  const context: BrowserContext = await browser.newContext({ viewport: viewports[options.viewport ?? 'desktop'] });
  await context.addInitScript({ content: reportCspViolations });
  const page = await context.newPage();
  const problems: string[] = [];
  const expected = options.expected ?? [];
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = `${message.text()} (${message.location().url})`;
    if (!expected.some((pattern) => pattern.test(text))) problems.push(text);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  return {
    page,
    problems,
    assertClean: () => assert.deepEqual(problems, [], `the page reported problems:\n${problems.join('\n')}`),
  } satisfies WatchedPage;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: number;
}

/** Runs axe-core in the page (evaluated through the DevTools protocol, so the page's CSP stays as it is). */
export async function assertAccessible(page: Page, where: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length })))`)) as AxeViolation[];
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `axe-core on ${where}: ${JSON.stringify(serious, null, 2)}`);
}

/**
 * Saves the page at desktop and phone width under screenshots/ (git-ignored), then restores the
 * viewport. `fullPage: false` for a page with a virtual list, which draws only what is in view.
 */
export async function screenshots(page: Page, name: string, { fullPage = true } = {}): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  const original = page.viewportSize();
  for (const [label, size] of Object.entries(viewports)) {
    await page.setViewportSize(size);
    await page.waitForTimeout(150);
    await page.screenshot({ path: path.join(screenshotDir, `${name}-${label}.png`), fullPage });
  }
  if (original) await page.setViewportSize(original);
}
