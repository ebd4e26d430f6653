import assert from 'node:assert/strict';
import { assertAccessible, chromiumPresent, screenshots } from './support/browser';
import { consoleFixture } from './support/console-fixture';
import { ingest } from './support/console-server';

describe('Statistics in Chromium', function () {
  if (!chromiumPresent) {
    it.skip('needs Chromium (Debian package chromium)');
    return;
  }
  const c = consoleFixture();
  const actor = { externalId: 'u-stats', displayName: 'Sam Statistic' };
  const resolve = (n: number) =>
    ingest(c.server.baseUrl, c.tenant.key, '/api/v1/ingest/events', {
      events: Array.from({ length: n }, () => ({ eventType: 'ticket.resolved', category: 'TASK_UPDATE', actor })),
    });

  it("shows a statistic's daily chart, top workers and summary, and the chart changes as events arrive", async () => {
    const manifest = await ingest(
      c.server.baseUrl,
      c.tenant.key,
      '/api/v1/apps/statistics',
      {
        statistics: [
          {
            id: `${c.tenant.slug}.resolved`,
            label: 'Tickets resolved',
            pillar: 'DELIVERY',
            format: 'number',
            aggregation: 'count',
            sourceEventTypes: ['ticket.resolved'],
            sourceEventCategories: ['TASK_UPDATE'],
            feedsDimensions: ['performance'],
          },
        ],
      },
      'PUT',
    );
    assert.equal(manifest.status, 200, JSON.stringify(manifest.body));
    assert.equal((await resolve(2)).status, 202);

    const page = await c.open();
    await c.signIn(page, await c.member('member', 'stats-member@example.com'));
    await page.getByRole('link', { name: 'Statistics' }).click();
    const card = page.getByRole('region', { name: 'Tickets resolved' });
    const total = card.getByLabel('Tickets resolved over the range');
    await total.filter({ hasText: /^2$/ }).waitFor({ timeout: 15_000 });
    await card
      .getByRole('img', { name: /^Chart of Tickets resolved/ })
      .locator('canvas')
      .waitFor();
    await card.getByRole('listitem').filter({ hasText: 'Sam Statistic' }).waitFor();
    await page.getByRole('region', { name: 'Delivery' }).getByText('Tickets resolved').waitFor();
    await page.getByRole('heading', { name: 'performance' }).waitFor();
    const today = card.getByRole('table', { name: 'Tickets resolved' }).getByRole('row').last();
    assert.equal(await today.getByRole('cell').textContent(), '2');
    await assertAccessible(page, 'statistics');
    await screenshots(page, 'statistics');

    assert.equal((await resolve(3)).status, 202);
    await total.filter({ hasText: /^5$/ }).waitFor({ timeout: 15_000 });
    await today.getByRole('cell').filter({ hasText: /^5$/ }).waitFor();

    await page.getByRole('button', { name: 'Last 7 days' }).click();
    assert.match(page.url(), /from=\d{4}-\d{2}-\d{2}&to=\d{4}-\d{2}-\d{2}/);
    await total.filter({ hasText: /^5$/ }).waitFor();

    // The worker page charts the same statistic for its worker.
    await card.getByRole('link', { name: 'Sam Statistic' }).click();
    await page.getByRole('img', { name: /^Chart of Tickets resolved: 5 over 30 days/ }).waitFor();
    await c.assertPagesClean();
  });
});
