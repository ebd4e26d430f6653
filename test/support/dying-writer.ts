// A writer thread entry (src/data/writer.ts) whose thread dies in the middle of a
// batch that carries metadata { dieInWriter: true }: after that batch's rows
// were written, before its commit, while the batches posted meanwhile wait.
import { serveWrites } from '../../src/data/writer';
import { storeBatchWithReply, type BatchToCommit } from '../../src/domain/event-ingest';
import { writeJobs } from '../../src/domain/writes';

const storeBatch = async (trx: Parameters<typeof storeBatchWithReply>[0], batch: BatchToCommit) => {
  const committed = await storeBatchWithReply(trx, batch);
  // The writer is sent each event's metadata as its JSON text only (batchToCommit).
  if (batch.judged.candidates.some((c) => c.metadataJson?.includes('"dieInWriter":true'))) {
    // Long enough for the other requests of the test to be posted to this thread.
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.exit(1);
  }
  return committed;
};

serveWrites({ ...writeJobs, storeBatch });
