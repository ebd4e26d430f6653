import { parentPort, Worker, workerData } from 'node:worker_threads';
import type { Transaction } from 'kysely';
import { ApiError, type ErrorCode } from '../errors';
import type { Database } from './schema';
import { openSqlite, sqliteKysely } from './sqlite';
import { GroupCommitter } from './transaction';

// One Node thread doing HTTP, JSON, validation and SQLite leaves the second
// core idle; SQLite's inserts and commits were some 40 ms of CPU per 1,000
// events of it (measured). The writer thread owns a second connection to the
// same file and runs one kind of unit of work (the job: a judged batch stored
// with its reply) in its own group commit; the HTTP thread posts the job's
// input, which must survive a structured clone, and gets what the job returned
// only after its transaction committed.

/** The unit of work a writer thread runs, in a transaction of its group commit. */
export type WriteJob<I, O> = (trx: Transaction<Database>, input: I) => Promise<O>;

interface Job {
  id: number;
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

/** Runs the job of a writer thread. */
export interface Writer<I, O> {
  /** Runs the job on `input`; resolves once its transaction committed, with what the job returned. */
  run(input: I): Promise<O>;
}

/** The HTTP thread's side: started on the first job, and again on the next job after it died. */
export class WriterThread<I, O> implements Writer<I, O> {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, { resolve(value: O): void; reject(error: unknown): void }>();
  private nextId = 0;

  /** `entry` is a module that calls serveWrites; `file` the SQLite database. */
  constructor(
    private readonly entry: string,
    private readonly file: string,
  ) {}

  run(input: I): Promise<O> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise<O>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        worker.postMessage({ id, input } satisfies Job);
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
    const worker = new Worker(bootstrap, { eval: true, workerData: { entry: this.entry, file: this.file } });
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
      // The thread answers with what the job, typed WriteJob<I, O>, returned for this id's input.
      waiting.resolve(answer.value as O);
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
export function serveWrites<I, O>(job: WriteJob<I, O>): void {
  const port = parentPort;
  if (!port) throw new Error('serveWrites runs in a worker thread started by WriterThread');
  const file: unknown = workerData?.file;
  if (typeof file !== 'string') throw new Error('the writer thread was started without a database file');
  const { connection } = openSqlite(file, { checkpoints: false });
  const kysely = sqliteKysely(connection, {});
  const committer = new GroupCommitter(kysely, connection);
  const running = new Set<Promise<void>>();
  port.on('message', (message: Job | Stop) => {
    if ('stop' in message) {
      void Promise.allSettled(running).then(async () => {
        await kysely.destroy();
        port.close();
      });
      return;
    }
    const { id } = message;
    const done: Promise<void> = committer
      // The input is what WriterThread<I, O>.run was given for this job.
      .run((trx) => job(trx, message.input as I))
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
