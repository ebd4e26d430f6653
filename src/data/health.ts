import { sql } from 'kysely';
import type { Executor } from './schema';

export async function databaseReachable(db: Executor): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
