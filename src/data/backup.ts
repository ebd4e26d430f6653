import { existsSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { migrationNames } from './db';
import { takeDatabaseLock } from './sqlite-lock';

/** A backup or restore that cannot be done; the message says why. */
export class BackupError extends Error {}

// One step for the whole file: the copy is then one read transaction, a
// consistent snapshot, and writers (WAL) are never blocked by it. In steps, a
// write by the server between two of them would start the copy over.
const ALL_PAGES = 0x7fffffff;

async function copySqlite(from: SqliteDatabase.Database, to: string): Promise<void> {
  const temporary = `${to}.partial-${process.pid}`;
  rmSync(temporary, { force: true });
  try {
    await from.backup(temporary, { progress: () => ALL_PAGES });
    renameSync(temporary, to);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw err;
  }
}

/**
 * A consistent copy of the SQLite database `file` into `to`, taken online
 * with SQLite's backup API while the server goes on writing. `to` appears
 * only once complete.
 */
export async function backupSqlite(file: string, to: string): Promise<{ pages: number }> {
  if (!existsSync(file)) throw new BackupError(`${file} does not exist`);
  if (existsSync(to)) throw new BackupError(`${to} already exists; choose another name or remove it`);
  const source = new SqliteDatabase(file, { fileMustExist: true });
  try {
    await copySqlite(source, path.resolve(to));
    return { pages: source.pragma('page_count', { simple: true }) as number };
  } finally {
    source.close();
  }
}

/**
 * Replaces the SQLite database `file` with the backup `from`, refusing while
 * a server holds the database. The backup must be a sound SQLite file made by
 * this service (migrations this version knows). It is copied beside `file`
 * and renamed over it, after the old file's WAL and shared-memory files are
 * removed (left, they would be replayed into the restored file).
 */
export async function restoreSqlite(file: string, from: string): Promise<{ events: number; migrations: string[] }> {
  const target = path.resolve(file);
  const lock = takeDatabaseLock(target, 'restore');
  try {
    const source = openBackup(from);
    try {
      const migrations = checkBackup(source, from);
      const events = (source.prepare('select count(*) as n from events').get() as { n: number }).n;
      const staged = `${target}.restoring`;
      rmSync(staged, { force: true });
      await copySqlite(source, staged);
      for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${target}${suffix}`, { force: true });
      renameSync(staged, target);
      return { events, migrations };
    } finally {
      source.close();
    }
  } finally {
    lock.release();
  }
}

function openBackup(from: string): SqliteDatabase.Database {
  if (!existsSync(from)) throw new BackupError(`${from} does not exist`);
  try {
    const source = new SqliteDatabase(from, { fileMustExist: true, readonly: true });
    source.pragma('schema_version');
    return source;
  } catch (err) {
    throw new BackupError(`${from} is not a SQLite database: ${(err as Error).message}`);
  }
}

function checkBackup(source: SqliteDatabase.Database, from: string): string[] {
  const integrity = source.pragma('quick_check', { simple: true });
  if (integrity !== 'ok') throw new BackupError(`${from} is damaged: ${String(integrity)}`);
  const hasMigrations = source.prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
  if (!hasMigrations) throw new BackupError(`${from} is not a database of this service (it has no migration record)`);
  const applied = (source.prepare('select name from kysely_migration order by name').all() as Array<{ name: string }>).map((r) => r.name);
  const known = new Set(migrationNames());
  const unknown = applied.filter((name) => !known.has(name));
  if (applied.length === 0) throw new BackupError(`${from} has no migration applied`);
  if (unknown.length) throw new BackupError(`${from} was made by a newer version of the service (migrations ${unknown.join(', ')}); upgrade first`);
  return applied;
}
