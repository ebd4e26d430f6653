/**
 * The web console's figures (issue 13), printed, not asserted: run by `make bench-web` after
 * `make build`. On a fresh SQLite database with the built service:
 *   1. JavaScript shipped for the first page (the entry and what it preloads), gzipped; limit 150 KB.
 *   2. A day of 5,000 rows: how many rows the timeline fetched and how many lines it has in the
 *      document, first view and after scrolling to the end once; all 5,000 would fail the point.
 *   3. First meaningful paint of the timeline with `ingestctl demo` data: from navigation to the
 *      first row on screen, median of 5 loads; limit 1 s. Then screenshots of each page with that
 *      data at desktop and phone width, into screenshots/ (git-ignored).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { setPassword } from '../../src/domain/sessions';
import { launchChromium, screenshots } from '../../test/browser/support/browser';
import { ingest, startConsoleServer } from '../../test/browser/support/console-server';
import { createTenant } from '../../test/support/fixtures';
import * as administration from '../../src/domain/administration';

const root = path.join(__dirname, '..', '..');
const web = path.join(root, 'dist', 'web');
const password = 'bench password for the console';
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

/** The entry script of index.html and every module it preloads: what the first page downloads. */
function firstPageJavaScript() {
  const html = readFileSync(path.join(web, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  const sizes = files.map((file) => {
    const body = readFileSync(path.join(web, file));
    return { file, raw: body.length, gzip: gzipSync(body, { level: 9 }).length };
  });
  return { files: sizes, gzip: sizes.reduce((sum, f) => sum + f.gzip, 0) };
}

async function signIn(page: Page, baseUrl: string, email: string) {
  await page.goto(`${baseUrl}/console/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Timeline', level: 1 }).waitFor();
}

/** Rows fetched from the timeline endpoints so far (items of /timeline, rows of /timeline/workers groups). */
function countFetchedRows(page: Page) {
  const counter = { rows: 0 };
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (!url.pathname.startsWith('/api/v1/console/timeline') || !response.ok()) return;
    // A response of a document navigated away from has no body any more: not counted.
    void response.json().then(
      (body: { items: Array<{ rows?: unknown[] }> }) => {
        if (url.searchParams.get('limit') === '1') return;
        counter.rows += url.pathname.endsWith('/workers') ? body.items.reduce((n, g) => n + (g.rows?.length ?? 0), 0) : body.items.length;
      },
      () => undefined,
    );
  });
  return counter;
}

async function fiveThousandRows() {
  const server = await startConsoleServer();
  const browser = await launchChromium();
  try {
    const tenant = await createTenant(server.db, { allowed: ['ticket.resolved'] });
    const member = await administration.addMember(server.db, { orgId: tenant.orgId, email: 'bench@example.com', role: 'member' });
    await setPassword(server.db, member.id, password);
    // Yesterday (UTC, the organization's zone), 5,000 events from 50 workers, 500 per request.
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const start = Date.parse(`${day}T00:00:00Z`);
    for (let batch = 0; batch < 10; batch++) {
      const events = Array.from({ length: 500 }, (_, i) => {
        const n = batch * 500 + i;
        return {
          eventType: 'ticket.resolved',
          category: 'TASK_UPDATE',
          actor: { externalId: `w-${n % 50}`, displayName: `Worker ${n % 50}` },
          timestamp: new Date(start + n * 17_000).toISOString(),
          metadata: { ticket: `OPS-${n}` },
        };
      });
      const sent = await ingest(server.baseUrl, tenant.key, '/api/v1/ingest/events', { events });
      if (sent.status !== 202) throw new Error(`ingest answered ${sent.status}: ${JSON.stringify(sent.body)}`);
    }
    const results = [];
    for (const [view, query] of [
      ['grouped per worker', `day=${day}`],
      ['filtered (every row of the day)', `day=${day}&category=TASK_UPDATE`],
    ] as const) {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await signIn(page, server.baseUrl, 'bench@example.com');
      await page.goto(`${server.baseUrl}/console/?${query}`, { waitUntil: 'commit' });
      const fetched = countFetchedRows(page);
      await page.locator('.row').first().waitFor();
      await page.waitForTimeout(500);
      const first = { fetched: fetched.rows, lines: await page.locator('.virtual > li').count() };
      await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
      await page.waitForTimeout(1500);
      const scrolled = { fetched: fetched.rows, lines: await page.locator('.virtual > li').count() };
      results.push({ view, first, scrolled });
      await page.context().close();
    }
    return results;
  } finally {
    await browser.close();
    await server.stop();
  }
}

async function demoFirstPaint() {
  let output = '';
  const server = await startConsoleServer(
    {},
    {
      seed: (vars) => {
        output = execFileSync(process.execPath, [path.join(root, 'bin', 'ingestctl'), '--json', 'demo'], { env: { ...process.env, ...vars }, encoding: 'utf8' });
      },
    },
  );
  const browser = await launchChromium();
  try {
    const demo = JSON.parse(output) as { ownerId: string; events: number; snapshots: number; workers: number };
    await setPassword(server.db, demo.ownerId, password);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await signIn(page, server.baseUrl, 'owner@demo.example');
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await page.goto(`${server.baseUrl}/console/`, { waitUntil: 'commit' });
      // Checked on every animation frame in the page: the time since navigation when a row is there.
      const shown = await page.waitForFunction(() => document.querySelector('.row') && performance.now(), undefined, { polling: 'raf' });
      times.push(Number(await shown.jsonValue()));
    }
    times.sort((a, b) => a - b);

    // Each page with the demo data, at desktop and phone width, into screenshots/ (git-ignored).
    // Yesterday: a whole day of the demo's events (today has only begun).
    await page.goto(`${server.baseUrl}/console/?day=${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}`);
    await page.locator('.row').first().waitFor();
    await screenshots(page, 'demo-timeline', { fullPage: false });
    await page.locator('.row').first().click();
    await page.getByRole('dialog').waitFor();
    await screenshots(page, 'demo-timeline-row', { fullPage: false });
    await page.keyboard.press('Escape');
    await page.locator('.line-worker a').first().click();
    await page.getByRole('list', { name: 'User strip' }).waitFor();
    await page.locator('.chart canvas').first().waitFor();
    await page.waitForTimeout(1000);
    await screenshots(page, 'demo-worker');
    await page.getByRole('link', { name: 'Statistics' }).click();
    await page.locator('.chart canvas').first().waitFor();
    await page.waitForTimeout(1000);
    await screenshots(page, 'demo-statistics');
    await page.getByRole('link', { name: 'Developer settings' }).click();
    await page.getByRole('heading', { name: /Usage this month/ }).waitFor();
    await screenshots(page, 'demo-settings');
    await page.getByRole('link', { name: 'Apps and keys' }).click();
    await page.getByRole('link', { name: 'Helpdesk' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await screenshots(page, 'demo-settings-app');
    return { demo, times, median: times[2] };
  } finally {
    await browser.close();
    await server.stop();
  }
}

async function main() {
  console.log(`Web console figures · ${new Date().toISOString()} · load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const js = firstPageJavaScript();
  console.log(`\n1. JavaScript for the first page: ${kb(js.gzip)} gzipped (limit 150 KB) ${js.gzip <= 150 * 1024 ? 'OK' : 'OVER'}`);
  for (const f of js.files) console.log(`   ${f.file}: ${kb(f.raw)} raw, ${kb(f.gzip)} gzipped`);

  console.log('\n2. A day of 5,000 rows (Chromium 1280×800): rows fetched / list lines in the document');
  for (const r of await fiveThousandRows()) {
    console.log(`   ${r.view}: first view ${r.first.fetched} fetched / ${r.first.lines} lines; after one scroll to the end ${r.scrolled.fetched} / ${r.scrolled.lines}`);
  }

  const paint = await demoFirstPaint();
  console.log(
    `\n3. Timeline's first row on screen with ingestctl demo data (${paint.demo.workers} workers, ${paint.demo.events} events, ${paint.demo.snapshots} snapshots): ` +
      `median ${paint.median.toFixed(0)} ms of ${paint.times.map((t) => t.toFixed(0)).join(', ')} (limit 1000 ms) ${paint.median <= 1000 ? 'OK' : 'OVER'}`,
  );
  console.log(`\nload average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
