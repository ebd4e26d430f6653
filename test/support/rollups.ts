import assert from 'node:assert/strict';
import { sourceDocument } from '../../src/contract/document-source';
import type { Schema } from '../../src/contract/types';
import { ContractValidators } from '../../src/contract/validators';
import { client } from './client';
import { ingest } from './console-data';
import { signIn } from './console';
import { setup } from './fixtures';

export type Definition = Record<string, unknown>;

export const ALLOWED = ['ticket.resolved', 'build.finished', 'review.done'];

/** A definition of the app `slug` (counting ticket.resolved / TASK_UPDATE), with overrides (undefined removes a field). */
export function definition(slug: string, name: string, overrides: Definition = {}): Definition {
  const merged: Definition = {
    id: `${slug}.${name}`,
    label: `Label ${name}`,
    pillar: 'DELIVERY',
    format: 'number',
    aggregation: 'count',
    sourceEventTypes: ['ticket.resolved'],
    sourceEventCategories: ['TASK_UPDATE'],
    ...overrides,
  };
  return Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined));
}

const validators = new ContractValidators(sourceDocument());
const asStored = validators.typed('StoredStatisticDefinition');

/** definition() as the service stores it: every default filled in, checked against the contract. */
export function storedDefinition(slug: string, name: string, overrides: Definition = {}): Schema<'StoredStatisticDefinition'> {
  const checked = asStored(validators.withDefaults('StatisticDefinition', definition(slug, name, overrides)));
  if ('issue' in checked) throw new Error(`not a stored definition: ${checked.issue.path} ${checked.issue.message}`);
  return checked.value;
}

/**
 * A tenant whose app allows ALLOWED, a member signed in to its console, and
 * helpers: put a manifest, send events, read after the rollups caught up.
 */
export async function rollupWorld(options: Parameters<typeof setup>[2] = {}) {
  const s = await setup({}, { allowed: ALLOWED }, options);
  const { app, db, tenant, services } = s;
  const { console: api } = await signIn(app, db, { orgId: tenant.orgId });
  const key = tenant.key;
  const def = (name: string, overrides: Definition = {}) => definition(tenant.slug, name, overrides);
  return {
    ...s,
    api,
    def,
    async putManifest(definitions: Definition[]): Promise<void> {
      const res = await client(app).put('/api/v1/apps/statistics', { key, body: { statistics: definitions } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    },
    send: (events: Partial<Schema<'IngestEvent'>>[]) => ingest(app, key, events),
    catchUp: () => services.rollups.catchUp(),
    /** GET /statistics/daily with these parameters (statisticId as a list), without catching up first. */
    async dailyNow(params: Record<string, string | string[]>): Promise<Schema<'DailyStatistics'>> {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(params)) for (const v of [value].flat()) query.append(name, v);
      const res = await api.get(`/api/v1/console/statistics/daily?${query.toString()}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    },
    async daily(params: Record<string, string | string[]>): Promise<Schema<'DailyStatistics'>> {
      await services.rollups.catchUp();
      return this.dailyNow(params);
    },
    async summary(params: Record<string, string | string[]>): Promise<Schema<'SummaryReport'>> {
      await services.rollups.catchUp();
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(params)) for (const v of [value].flat()) query.append(name, v);
      const res = await api.get(`/api/v1/console/reports/summary?${query.toString()}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    },
  };
}

/** The days of a series as [day, value, count] triples, for compact assertions. */
export function dayValues(series: Schema<'DailySeries'> | undefined): [string, number | null, number][] {
  assert.ok(series, 'the series is in the answer');
  return series.days.map((d) => [d.day, d.value, d.count]);
}
