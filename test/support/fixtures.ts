import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { createApp } from '../../src/app';
import { loadConfig, type Config } from '../../src/config';
import type { Db } from '../../src/data/db';
import * as administration from '../../src/domain/administration';
import { createServices, type ServiceOptions, type Services } from '../../src/services';
import { sharedDatabase } from './database';

export const silentLogger = pino({ level: 'silent' });

/** Configuration as the service would parse it from these variables, on the given database. */
export function testConfig(db: { config: Config['database'] }, env: Record<string, string> = {}): Config {
  return loadConfig({ AUTH_CACHE_TTL_SECONDS: '0', LOG_LEVEL: 'silent', ...env, DATABASE_URL: databaseUrlOf(db.config) });
}

/** The DATABASE_URL that names this database. */
export function databaseUrlOf(config: Config['database']): string {
  return config.kind === 'sqlite' ? `sqlite:${config.path}` : config.url;
}

export interface Tenant {
  orgId: string;
  ownerEmail: string;
  appId: string;
  slug: string;
  keyId: string;
  key: string;
}

/** An organization with an owner, one app allowing `allowed`, and a key. */
export async function createTenant(
  db: Db,
  options: { allowed?: string[]; maxEventsPerMonth?: number | null; apiEnabled?: boolean; slug?: string } = {},
): Promise<Tenant> {
  const suffix = randomBytes(4).toString('hex');
  const org = await administration.createOrganization(db, `Org ${suffix}`, {
    apiEnabled: options.apiEnabled ?? true,
    maxEventsPerMonth: options.maxEventsPerMonth ?? null,
  });
  const ownerEmail = `owner-${suffix}@example.com`;
  await administration.addMember(db, { orgId: org.id, email: ownerEmail, role: 'owner' });
  const slug = options.slug ?? `app-${suffix}`;
  const app = await administration.createApp(db, { orgId: org.id, slug, name: `App ${suffix}`, asEmail: ownerEmail });
  const allowed = options.allowed ?? ['ticket.resolved', 'build.finished'];
  if (allowed.length) await administration.changeAllowedEventTypes(db, app.id, allowed, true);
  const key = await administration.issueKey(db, app.id);
  return { orgId: org.id, ownerEmail, appId: app.id, slug, keyId: key.id, key: key.key };
}

/** A key of the app that expired a second ago (a past expiry cannot be issued). */
export async function issueExpiredKey(db: Db, appId: string) {
  const key = await administration.issueKey(db, appId, new Date(Date.now() + 60_000).toISOString());
  const expiresAt = new Date(Date.now() - 1000).toISOString();
  await db.kysely.updateTable('api_keys').set({ expires_at: expiresAt }).where('id', '=', key.id).execute();
  return { ...key, expiresAt };
}

const openServices: Services[] = [];

/**
 * The shared database, an app on it configured by `env`, and a fresh tenant.
 * The app's services (a Redis connection, say) are closed after the test.
 */
export async function setup(
  env: Record<string, string> = {},
  tenant: Parameters<typeof createTenant>[1] = {},
  options: Omit<ServiceOptions, 'logger'> = {},
) {
  const shared = await sharedDatabase();
  const config = testConfig(shared, env);
  const services = createServices(config, shared.db, { logger: silentLogger, ...options });
  openServices.push(services);
  const app = createApp(config, shared.db, { logger: silentLogger, services });
  return { db: shared.db, config, app, services, tenant: await createTenant(shared.db, tenant) };
}

export async function closeServices(): Promise<void> {
  await Promise.all(openServices.splice(0).map((services) => services.close()));
}
