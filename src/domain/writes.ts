import type { Db } from '../data/db';
import type { InputOf, OutputOf, WriteJob } from '../data/writer';
import { storeBatchWithReply } from './event-ingest';
import { addSummedBatches, drainRollupOutbox } from './rollup-drain';
import { addRecomputedChunk } from './rollup-recompute';

/**
 * The units of work that SQLite's writer thread runs (src/data/writer.ts,
 * src/writer-thread.ts), by name: the writes made for every batch, and a
 * recompute's chunks. Where there is no writer thread (PostgreSQL), runWrite
 * runs them in a transaction of Db's; drainRollupOutbox is PostgreSQL's,
 * addSummedBatches and addRecomputedChunk SQLite's (and PostgreSQL's for
 * what it cannot read).
 */
export const writeJobs = {
  storeBatch: storeBatchWithReply,
  drainRollupOutbox,
  addSummedBatches,
  addRecomputedChunk,
};

export type WriteJobTable = typeof writeJobs;

// Each job by its name, typed so that one generic name picks its own input and output.
const jobs: { [K in keyof WriteJobTable]: WriteJob<InputOf<WriteJobTable[K]>, OutputOf<WriteJobTable[K]>> } = writeJobs;

/** Runs the job `name` in one transaction: in the database's writer thread when it has one, else Db.transaction. */
export function runWrite<K extends keyof WriteJobTable>(
  db: Db,
  name: K,
  input: InputOf<WriteJobTable[K]>,
): Promise<OutputOf<WriteJobTable[K]>> {
  if (db.writer) return db.writer.run(name, input);
  const job = jobs[name];
  return db.transaction((trx) => job(trx, input));
}
