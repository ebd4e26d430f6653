// The SQLite writer thread's entry (src/data/writer.ts): it runs the jobs of src/domain/writes.ts.
import { serveWrites } from './data/writer';
import { writeJobs } from './domain/writes';

serveWrites(writeJobs);
