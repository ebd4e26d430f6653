import type { Executor } from './schema';

/** The organization's time zone (IANA name); undefined for an unknown organization. */
export async function timeZoneOf(db: Executor, orgId: string): Promise<string | undefined> {
  const row = await db.selectFrom('organizations').select('time_zone').where('id', '=', orgId).executeTakeFirst();
  return row?.time_zone;
}

/** Sets the organization's time zone; the caller has checked that it is a zone name. */
export async function setTimeZone(db: Executor, orgId: string, timeZone: string): Promise<void> {
  await db.updateTable('organizations').set({ time_zone: timeZone }).where('id', '=', orgId).execute();
}

/** Every organization's id, in order: what a sweep or a verification goes through, one at a time. */
export async function organizationIds(db: Executor): Promise<string[]> {
  return (await db.selectFrom('organizations').select('id').orderBy('id').execute()).map((row) => row.id);
}
