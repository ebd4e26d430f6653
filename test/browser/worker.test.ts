import assert from 'node:assert/strict';
import { assertAccessible, chromiumPresent, screenshots } from './support/browser';
import { consoleFixture } from './support/console-fixture';
import { ingest } from './support/console-server';

describe('The worker page in Chromium', function () {
  if (!chromiumPresent) {
    it.skip('needs Chromium (Debian package chromium)');
    return;
  }
  const c = consoleFixture();

  it('opens a worker from the timeline and reads its strip: four metrics in the order sent, with labels and units', async () => {
    const actor = { externalId: 'u-strip', displayName: 'Robin Strip' };
    for (const [hoursAgo, load] of [
      [3, 5],
      [2, 9],
      [1, 7],
    ]) {
      const sent = await ingest(c.server.baseUrl, c.tenant.key, '/api/v1/ingest/snapshots', {
        snapshotType: 'oncall.load',
        actor,
        timestamp: new Date(Date.now() - hoursAgo * 3_600_000).toISOString(),
        // Five metrics, in an order that is not alphabetical: the strip keeps the first four as sent.
        metrics: {
          zPages: { value: load, unit: 'count', label: 'Pages this week' },
          openIncidents: load - 2,
          focus: { value: 0.5, unit: 'ratio' },
          mttr: { value: 42, unit: 'minutes', label: 'Time to resolve' },
          aFifth: 1,
        },
      });
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
    }
    await ingest(c.server.baseUrl, c.tenant.key, '/api/v1/ingest/events', {
      events: [{ eventType: 'ticket.resolved', category: 'TASK_UPDATE', actor, metadata: { ticket: 'OPS-1' } }],
    });

    const page = await c.open();
    await c.signIn(page, await c.member('member', 'worker-member@example.com'));
    await page.getByRole('link', { name: 'Robin Strip' }).first().click();
    await page.getByRole('heading', { name: 'Robin Strip', level: 1 }).waitFor();
    const card = page.getByRole('list', { name: 'User strip' }).getByRole('listitem');
    await card.getByRole('heading', { name: /^App / }).waitFor();
    assert.deepEqual(await card.locator('dt').allTextContents(), ['Pages this week', 'openIncidents', 'focus', 'Time to resolve']);
    assert.deepEqual(await card.locator('.metric__value').allTextContents(), ['7', '5', '0.5', '42 min']);
    assert.deepEqual(await card.locator('dd.metric__unit').allTextContents(), ['count', 'ratio', 'minutes']);
    await card.getByRole('img', { name: 'Pages this week: the last 3 snapshots' }).waitFor();

    // A chart per numeric metric (five), each with its figures in a table.
    await page
      .getByRole('img', { name: /^Chart of Pages this week/ })
      .locator('canvas')
      .first()
      .waitFor();
    assert.equal(await page.getByRole('img', { name: /^Chart of / }).count(), 5);
    assert.equal(
      await page
        .getByRole('table', { name: /^Pages this week/ })
        .getByRole('row')
        .count(),
      4,
    );
    // The worker's own timeline: the event and the snapshots of today.
    await page.getByRole('button', { name: /ticket\.resolved/ }).waitFor();
    await assertAccessible(page, 'the worker page');
    await screenshots(page, 'worker');
    await c.assertPagesClean();
  });
});
