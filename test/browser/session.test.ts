import assert from 'node:assert/strict';
import { inviteMember } from '../../src/domain/sessions';
import * as administration from '../../src/domain/administration';
import { assertAccessible, chromiumPresent, screenshots } from './support/browser';
import { consoleFixture, password } from './support/console-fixture';

describe('Console sessions in Chromium: sign-in, invite, sign-out, roles', function () {
  if (!chromiumPresent) {
    it.skip('needs Chromium (Debian package chromium)');
    return;
  }
  const c = consoleFixture();

  it('signs in, and refuses a wrong password with a message', async () => {
    const email = await c.member('owner', 'signin-owner@example.com');
    const page = await c.open();
    await page.goto(`${c.server.baseUrl}/console/`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await assertAccessible(page, 'sign-in');
    await screenshots(page, 'sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the right password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /password|credentials/i })
      .waitFor();
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Timeline', level: 1 }).waitFor();
    await c.assertPagesClean();
  });

  it('lets an invited member choose a password through the invite link, and signs them in', async () => {
    const { id } = await administration.addMember(c.server.db, {
      orgId: c.tenant.orgId,
      email: 'invited@example.com',
      role: 'member',
      name: 'Invited Person',
    });
    const invite = await inviteMember(c.server.db, { publicUrl: c.server.baseUrl }, id);
    const page = await c.open('phone');
    await page.goto(invite.url);
    await page.getByText('invited@example.com').waitFor();
    await assertAccessible(page, 'the invite page');
    await screenshots(page, 'invite');
    await page.getByLabel('New password').fill(password);
    await page.getByLabel('The same password again').fill(password);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Timeline', level: 1 }).waitFor();
    await page.getByText('Invited Person').waitFor();
    await c.assertPagesClean();
  });

  it('shows a member no Developer settings, and sends them back from its address', async () => {
    const page = await c.open();
    await c.signIn(page, await c.member('member', 'plain-member@example.com'));
    assert.equal(await page.getByRole('link', { name: 'Developer settings' }).count(), 0);
    await page.goto(`${c.server.baseUrl}/console/settings/apps`);
    await page.getByRole('heading', { name: 'Timeline', level: 1 }).waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Developer settings' }).count(), 0);
    await c.assertPagesClean();
  });

  it('signs out, and a signed-out address goes to sign-in', async () => {
    const page = await c.open();
    await c.signIn(page, await c.member('member', 'signout-member@example.com'));
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await page.goto(`${c.server.baseUrl}/console/statistics`);
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await c.assertPagesClean();
  });
});
