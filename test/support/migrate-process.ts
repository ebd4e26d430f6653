// Run as a separate process by test/migrate.test.ts: opens DATABASE_URL, waits
// until START_AT (ms since the epoch) so that every process starts together,
// migrates, and prints "migrated".
import { loadConfig } from '../../src/config';
import { migrate, openDatabase } from '../../src/data/db';

async function main(): Promise<void> {
  const db = openDatabase(loadConfig().database);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(process.env.START_AT) - Date.now())));
  try {
    await migrate(db);
    process.stdout.write('migrated\n');
  } finally {
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
