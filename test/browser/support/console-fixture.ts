import type { Browser, Page } from 'playwright-core';
import * as administration from '../../../src/domain/administration';
import { setPassword } from '../../../src/domain/sessions';
import { createTenant, type Tenant } from '../../support/fixtures';
import { launchChromium, watchedPage, type WatchedPage } from './browser';
import { startConsoleServer } from './console-server';

export const password = 'correct horse battery staple';
// Chromium logs every failed fetch as a console error; a 401 is what a signed-out page gets on purpose.
const expectedNetworkErrors = [/status of 401/];

/**
 * Mocha hooks for a describe block: the built server on a fresh SQLite database, Chromium, and an
 * organization with an app allowing ticket.resolved and build.finished. Its helpers make members,
 * open watched pages, sign in, and check that no page reported a problem.
 */
export function consoleFixture() {
  const state = {} as { server: Awaited<ReturnType<typeof startConsoleServer>>; browser: Browser; tenant: Tenant };
  const pages: WatchedPage[] = [];

  before(async function () {
    this.timeout(120_000);
    state.server = await startConsoleServer();
    state.browser = await launchChromium();
    state.tenant = await createTenant(state.server.db, { allowed: ['ticket.resolved', 'build.finished'] });
  });
  afterEach(async () => {
    await Promise.all(pages.splice(0).map((w) => w.page.context().close()));
  });
  after(async () => {
    await state.browser?.close();
    await state.server?.stop();
  });

  return {
    get server() {
      return state.server;
    },
    get tenant() {
      return state.tenant;
    },
    /** A member of the tenant's organization with `password`; returns the email. */
    async member(role: 'owner' | 'admin' | 'member', email: string): Promise<string> {
      const { id } = await administration.addMember(state.server.db, { orgId: state.tenant.orgId, email, role, name: `${role} person` });
      await setPassword(state.server.db, id, password);
      return email;
    },
    /** A watched page; `expected` adds console errors the test accepts (a failed request it expects). */
    async open(viewport: 'desktop' | 'phone' = 'desktop', expected: RegExp[] = []): Promise<Page> {
      const watched = await watchedPage(state.browser, { viewport, expected: [...expectedNetworkErrors, ...expected] });
      pages.push(watched);
      return watched.page;
    },
    async signIn(page: Page, email: string): Promise<void> {
      await page.goto(`${state.server.baseUrl}/console/`);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Timeline', level: 1 }).waitFor();
    },
    /** Every page the test opened had no console error, uncaught error or CSP violation; closes them. */
    async assertPagesClean(): Promise<void> {
      const opened = pages.splice(0);
      await Promise.all(opened.map((w) => w.page.context().close()));
      for (const watched of opened) watched.assertClean();
    },
  };
}
