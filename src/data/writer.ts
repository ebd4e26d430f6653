import { parentPort, Worker, workerData } from 'node:worker_threads';
import type { Transaction } from 'kysely';
import { ApiError, type ErrorCode } from '../errors';
import type { Database } from './schema';
import { openSqlite, sqliteKysely } from './sqlite';
import { GroupCommitter } from './transaction';
import { WorkerCache } from './worker-cache';

// One Node thread doing HTTP, JSON, validation and SQLite leaves the second
// core idle; SQLite's inserts and commits were some 40 ms of CPU per 1,000
// events of it (measured). The writer thread owns a second connection to the
// same file and runs named units of work (jobs: a judged batch stored with its
// reply, the rollups' outbox drained, a recompute's chunk) in its own group
// commit; the HTTP thread posts a job's name and input, which must survive a
// structured clone, and gets what the job returned only after its transaction
// committed. Whatever else writes on the HTTP thread's connection waits for
// the writer's lock and makes the writer wait for its own: what writes often
// belongs here.

// What the thread allocates (a batch as cloned, its statements' parameters) is dead before the next job: 8 MB
// semi-spaces (V8's default for the thread is 16) left its CPU per event within the runs' spread and took 16 MB off
// the process's peak RSS (make bench, 2026-11-27; 4 MB cost 1-2 ms of CPU per 1,000 events in the GC's helpers).
const YOUNG_GENERATION_MB = 24;

/** A unit of work a writer thread runs, in a transaction of its group commit. */
export type WriteJob<I, O> = (trx: Transaction<Database>, input: I) => Promise<O>;

/** The jobs a writer thread knows, by name. */
export type WriteJobs = Record<string, WriteJob<never, unknown>>;
export type InputOf<J> = J extends WriteJob<infer I, unknown> ? I : never;
export type OutputOf<J> = J extends WriteJob<never, infer O> ? O : never;

interface Job {
  id: number;
  name: string;
  input: unknown;
}
type Stop = { stop: true };
type Answer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: SentError };

/** An error as it crosses to the HTTP thread: a structured clone keeps neither its class nor its code. */
interface SentError {
  message: string;
  code?: string;
  api?: { code: ErrorCode; headers: Record<string, string> };
}

/**
 * The writer thread stopped (it failed, or was ended) with jobs pending:
 * their transactions were rolled back with its connection, nothing of them is
 * committed. isDatabaseUnavailable knows its code: the request answers 503.
 */
export class WriterExited extends Error {
  readonly code = 'WRITER_EXITED';
}

/** A failure the job raised in the writer thread, with the code it had there (SQLITE_BUSY, ...). */
class WriteFailed extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

// Built code runs as it is; under tsx (tests) the entry is TypeScript, which a new thread must be taught.
const bootstrap = `
const { workerData } = require('node:worker_threads');
if (workerData.entry.endsWith('.ts')) require('tsx/cjs');
require(workerData.entry);
`;

/** Runs the jobs of a writer thread. */
export interface Writer<J extends WriteJobs> {
  /** Runs the job `name` on `input`; resolves once its transaction committed, with what the job returned. */
  run<K extends keyof J & string>(name: K, input: InputOf<J[K]>): Promise<OutputOf<J[K]>>;
}

/** The HTTP thread's side: started on the first job, and again on the next job after it died. */
export class WriterThread<J extends WriteJobs> implements Writer<J> {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>();
  private nextId = 0;

  /** `entry` is a module that calls serveWrites; `file` the SQLite database. */
  constructor(
    private readonly entry: string,
    private readonly file: string,
  ) {}

  run<K extends keyof J & string>(name: K, input: InputOf<J[K]>): Promise<OutputOf<J[K]>> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise<OutputOf<J[K]>>((resolve, reject) => {
      // The thread answers this id with what the job `name`, typed by J, returned.
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        worker.postMessage({ id, name, input } satisfies Job);
      } catch (error) {
        this.pending.delete(id);
        reject(error);
      }
    });
  }

  /** Lets the jobs posted so far finish, then closes the thread's connection and ends it. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    // Unreferenced, the thread would not keep the process alive long enough to finish.
    worker.ref();
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.postMessage({ stop: true } satisfies Stop);
    await exited;
  }

  private start(): Worker {
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: { entry: this.entry, file: this.file },
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    // Idle, it does not hold the process open (a forgotten close() would); its pending jobs' callers do.
    worker.unref();
    let failure: unknown;
    worker.on('message', (answer: Answer) => this.settle(answer));
    // An uncaught failure ends the thread: 'exit' follows and says what was lost.
    worker.on('error', (error) => (failure = error));
    worker.on('exit', (code) => {
      this.worker = undefined;
      const error = new WriterExited(`the SQLite writer thread exited (code ${code}) with ${this.pending.size} job(s) pending`, {
        cause: failure,
      });
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    });
    this.worker = worker;
    return worker;
  }

  private settle(answer: Answer): void {
    const waiting = this.pending.get(answer.id);
    if (!waiting) return;
    this.pending.delete(answer.id);
    if (answer.ok) {
      waiting.resolve(answer.value);
      return;
    }
    const { message, code, api } = answer.error;
    waiting.reject(api ? new ApiError(api.code, message, api.headers) : new WriteFailed(message, code));
  }
}

/**
 * The writer thread's side (call it from the entry module): opens the
 * database named by the HTTP thread and runs each job posted in its group
 * commit, answering once that committed. A job that fails rolls back alone.
 */
export function serveWrites(jobs: WriteJobs): void {
  const port = parentPort;
  if (!port) throw new Error('serveWrites runs in a worker thread started by WriterThread');
  const file: unknown = workerData?.file;
  if (typeof file !== 'string') throw new Error('the writer thread was started without a database file');
  const { connection } = openSqlite(file, { checkpoints: false });
  const kysely = sqliteKysely(connection, {});
  const committer = new GroupCommitter(kysely, connection, new WorkerCache(connection));
  const running = new Set<Promise<void>>();
  port.on('message', (message: Job | Stop) => {
    if ('stop' in message) {
      void Promise.allSettled(running).then(async () => {
        await kysely.destroy();
        port.close();
      });
      return;
    }
    const { id, name } = message;
    // The input is what WriterThread.run was given for this job, typed there by the same table of jobs.
    const job = jobs[name] as WriteJob<unknown, unknown> | undefined;
    const done: Promise<void> = committer
      .run((trx) => {
        if (!job) throw new Error(`the writer thread has no job ${name}`);
        return job(trx, message.input);
      })
      .then(
        (value) => port.postMessage({ id, ok: true, value } satisfies Answer),
        (error: unknown) => port.postMessage({ id, ok: false, error: sent(error) } satisfies Answer),
      )
      .finally(() => running.delete(done));
    running.add(done);
  });
}

function sent(error: unknown): SentError {
  if (error instanceof ApiError) return { message: error.message, api: { code: error.code, headers: error.headers } };
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown };
  return { message: typeof message === 'string' ? message : String(error), code: typeof code === 'string' ? code : undefined };
}
