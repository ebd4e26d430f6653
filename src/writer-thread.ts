// The SQLite writer thread's entry (src/data/writer.ts): what it runs is a judged batch stored with its reply.
import { serveWrites } from './data/writer';
import { storeBatchWithReply } from './domain/event-ingest';

serveWrites(storeBatchWithReply);
