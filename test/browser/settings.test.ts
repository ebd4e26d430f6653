import assert from 'node:assert/strict';
import { assertAccessible, chromiumPresent, screenshots } from './support/browser';
import { consoleFixture } from './support/console-fixture';
import { ingest } from './support/console-server';

describe('Developer settings in Chromium', function () {
  if (!chromiumPresent) {
    it.skip('needs Chromium (Debian package chromium)');
    return;
  }
  const c = consoleFixture();

  it('issues a key in Developer settings that works on the ingest API, then revokes it', async () => {
    const page = await c.open();
    await c.signIn(page, await c.member('admin', 'keys-admin@example.com'));
    await page.getByRole('link', { name: 'Developer settings' }).click();
    await page.getByRole('link', { name: 'Apps and keys' }).click();
    await page.getByRole('link', { name: /^App / }).first().click();
    await page.getByRole('button', { name: 'Issue a key' }).click();
    const key = await page.getByLabel('Key', { exact: true }).inputValue();
    assert.match(key, /^svc_live_[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'Copy key' }).waitFor();
    await assertAccessible(page, 'the app settings with a new key');
    await screenshots(page, 'settings-app');

    assert.equal((await ingest(c.server.baseUrl, key, '/api/v1/ingest/ping')).status, 200);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Revoke ${key.slice(0, 15)}` }).click();
    await page.getByRole('cell', { name: 'Revoked' }).waitFor();
    const refused = await ingest(c.server.baseUrl, key, '/api/v1/ingest/ping');
    assert.equal(refused.status, 401);
    await c.assertPagesClean();
  });

  it('shows the organization with its usage, and the members to an owner', async () => {
    const page = await c.open();
    await c.signIn(page, await c.member('owner', 'pages-owner@example.com'));
    await page.getByRole('link', { name: 'Developer settings' }).click();
    await page.getByRole('heading', { name: /Usage this month/ }).waitFor();
    await assertAccessible(page, 'organization settings');
    await screenshots(page, 'settings-organization');
    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('cell', { name: /pages-owner@example.com/ }).waitFor();
    await assertAccessible(page, 'members');
    await screenshots(page, 'settings-members');
    await c.assertPagesClean();
  });

  it('lists the changes in the audit log, newest first, with who made them', async () => {
    const page = await c.open();
    await c.signIn(page, await c.member('owner', 'audit-owner@example.com'));
    await page.getByRole('link', { name: 'Developer settings' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Renamed for the audit log');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('link', { name: 'Audit log' }).click();
    const table = page.getByRole('table', { name: 'Changes to the organization, newest first' });
    const newest = table.getByRole('row').nth(1);
    await newest.getByRole('cell', { name: 'audit-owner@example.com' }).waitFor();
    assert.match((await newest.textContent()) ?? '', /organization/);
    await assertAccessible(page, 'the audit log');
    await screenshots(page, 'settings-audit-log');
    await c.assertPagesClean();
  });
});
