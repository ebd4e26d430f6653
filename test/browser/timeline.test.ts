import assert from 'node:assert/strict';
import { assertAccessible, chromiumPresent, screenshots } from './support/browser';
import { consoleFixture } from './support/console-fixture';
import { ingest } from './support/console-server';

describe('The timeline in Chromium', function () {
  if (!chromiumPresent) {
    it.skip('needs Chromium (Debian package chromium)');
    return;
  }
  const c = consoleFixture();

  it('tells a new organization how to send its first event, then shows it as it arrives, without a reload', async () => {
    const page = await c.open();
    await c.signIn(page, await c.member('member', 'timeline-member@example.com'));
    await page.getByRole('heading', { name: 'No event yet: send your first one' }).waitFor();
    const curl = await page.getByLabel('The command that sends a first event').textContent();
    assert.match(curl ?? '', /curl -X POST http:\/\/127\.0\.0\.1:\d+\/api\/v1\/ingest\/events/);
    await assertAccessible(page, 'the empty timeline');
    await screenshots(page, 'timeline-empty');
    // A reload would lose this mark.
    await page.evaluate(() => Object.assign(window, { stillTheSamePage: true }));

    const sent = await ingest(c.server.baseUrl, c.tenant.key, '/api/v1/ingest/events', {
      events: [
        {
          eventType: 'ticket.resolved',
          category: 'TASK_UPDATE',
          actor: { externalId: 'u-1842', displayName: 'Dana Whitfield' },
          duration: 1260,
          metadata: { ticket: 'OPS-4411' },
        },
      ],
    });
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    await page.getByRole('button', { name: /ticket\.resolved/ }).waitFor({ timeout: 15_000 });
    assert.equal(await page.evaluate(() => 'stillTheSamePage' in window), true, 'the page was reloaded');
    await page.getByRole('link', { name: 'Dana Whitfield' }).waitFor();

    await page.getByRole('button', { name: /ticket\.resolved/ }).click();
    const dialog = page.getByRole('dialog', { name: 'ticket.resolved' });
    await dialog.getByText('"ticket": "OPS-4411"').waitFor();
    await dialog.getByText('21 min').waitFor();
    await assertAccessible(page, 'a row opened');
    await screenshots(page, 'timeline-row');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await screenshots(page, 'timeline', { fullPage: false });
    await c.assertPagesClean();
  });

  it('filters the day by category and event type, kept in the address', async () => {
    await ingest(c.server.baseUrl, c.tenant.key, '/api/v1/ingest/events', {
      events: [{ eventType: 'build.finished', category: 'CODE_CHANGE', actor: { externalId: 'u-77', displayName: 'Lee Builder' } }],
    });
    const page = await c.open('phone');
    await c.signIn(page, await c.member('admin', 'timeline-admin@example.com'));
    await page.getByRole('button', { name: /build\.finished/ }).waitFor();
    await page.getByLabel('Category').selectOption({ label: 'Task update' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: /ticket\.resolved/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: /build\.finished/ }).count(), 0);
    assert.match(page.url(), /category=TASK_UPDATE/);

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Event type').fill('build.finished');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: /build\.finished/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: /ticket\.resolved/ }).count(), 0);
    await assertAccessible(page, 'a filtered timeline on a phone');

    // A filtered day gets its new rows without a reload too.
    await ingest(c.server.baseUrl, c.tenant.key, '/api/v1/ingest/events', {
      events: [{ eventType: 'build.finished', category: 'CODE_CHANGE', actor: { externalId: 'u-78', displayName: 'Kim Later' } }],
    });
    await page.getByRole('link', { name: 'Kim Later' }).waitFor({ timeout: 15_000 });
    await c.assertPagesClean();
  });

  it("shows a worker's newest five rows in their group, and all of their day on request", async () => {
    const actor = { externalId: 'u-busy', displayName: 'Busy Bee' };
    const events = Array.from({ length: 7 }, (_, i) => ({
      eventType: 'ticket.resolved',
      category: 'TASK_UPDATE',
      actor,
      timestamp: new Date(Date.now() - i * 1000).toISOString(),
      metadata: { ticket: `BEE-${i}` },
    }));
    assert.equal((await ingest(c.server.baseUrl, c.tenant.key, '/api/v1/ingest/events', { events })).status, 202);
    const page = await c.open();
    await c.signIn(page, await c.member('member', 'timeline-groups@example.com'));
    await page.getByRole('heading', { name: /Busy Bee 7 rows/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: /BEE-\d/ }).count(), 5);
    await page.getByRole('button', { name: 'All 7 rows of Busy Bee that day' }).click();
    await page.getByRole('button', { name: /BEE-6/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: /BEE-\d/ }).count(), 7);
    assert.match(page.url(), /worker=wkr_/);
    assert.equal(await page.getByLabel('Worker').inputValue(), 'Busy Bee');

    // The worker filter by a prefix of the name, any case: the only match is taken.
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('heading', { name: /Busy Bee 7 rows/ }).waitFor();
    await page.getByLabel('Worker').fill('busy');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('button', { name: /BEE-6/ }).waitFor();
    assert.match(page.url(), /worker=wkr_/);
    await page.getByLabel('Worker').fill('nobody-by-this-name');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('alert').filter({ hasText: 'No worker matches this name.' }).waitFor();
    await c.assertPagesClean();
  });
});
