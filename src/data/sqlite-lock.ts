import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';

/** Another process (a running server, or a restore under way) holds the database. */
export class DatabaseInUse extends Error {}

export interface DatabaseLock {
  release(): void;
}

/** The sidecar file whose lock says that a process owns the SQLite database `file`. */
export function lockFileOf(file: string): string {
  return `${path.resolve(file)}.lock`;
}

/**
 * Takes the ownership lock of a SQLite database: held by the server for its
 * whole life and by a restore while it replaces the file, so neither runs
 * under the other. The lock is SQLite's own exclusive lock on a sidecar file,
 * an OS file lock, so it goes away with its process however that ends: no
 * stale pid file to clean up, no pid reuse to be fooled by.
 */
export function takeDatabaseLock(file: string, holder: string): DatabaseLock {
  const lock = new SqliteDatabase(lockFileOf(file));
  lock.pragma('busy_timeout = 0');
  try {
    lock.exec('begin exclusive');
  } catch (err) {
    lock.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new DatabaseInUse(`${path.resolve(file)} is in use by another process (a running server, or a restore): ${holder} needs it alone`);
    }
    throw err;
  }
  return {
    release: () => {
      lock.exec('rollback');
      lock.close();
    },
  };
}
