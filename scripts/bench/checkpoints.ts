// PostgreSQL's checkpoints during a measured run. While a checkpoint syncs the files it wrote, commits wait
// for their own WAL flush on the same disk: on the 2-core VMs a sync took 0.5-1.7 s, and the answers over
// 100 ms of a run came in bursts at its end (make bench at max_wal_size 1 GB checkpoints every 12-19 s; the
// history, 2026-11-29). The server's cumulative statistics say when a checkpoint ended and how long its sync
// took, so polling them bounds each sync in time, and the run's slow answers can be told apart.
import { Client } from 'pg';

export interface SlowAnswer {
  /** When the answer arrived (epoch ms) and how long it took. */
  endMs: number;
  latencyMs: number;
}

/** What the measured window saw of PostgreSQL's checkpoints. */
export interface CheckpointFigures {
  /** Checkpoints that ended in the window, and their sync phases' time in all. */
  ended: number;
  syncSeconds: number;
  /** Each sync phase, bounded in time by two polls (epoch ms). */
  syncs: { fromMs: number; toMs: number }[];
}

interface Reading {
  atMs: number;
  ended: number;
  syncMs: number;
}

const POLL_MS = 250;

// pg_stat_checkpointer holds these from PostgreSQL 17 on; pg_stat_bgwriter before.
const READINGS = [
  'select checkpoints_timed + checkpoints_req as ended, checkpoint_sync_time as sync_ms from pg_stat_bgwriter',
  'select num_timed + num_requested as ended, sync_time as sync_ms from pg_stat_checkpointer',
];

/** Polls the cluster's checkpoint statistics from start() until stop(). */
export class CheckpointWatch {
  private readonly client: Client;
  private readonly readings: Reading[] = [];
  private timer: NodeJS.Timeout | undefined;
  private query = READINGS[0] as string;
  private polling: Promise<void> = Promise.resolve();

  constructor(url: string) {
    this.client = new Client({ connectionString: url });
  }

  async start(): Promise<void> {
    await this.client.connect();
    try {
      await this.read();
    } catch {
      this.query = READINGS[1] as string;
      await this.read();
    }
    this.timer = setInterval(() => {
      this.polling = this.polling.then(() => this.read()).catch(() => undefined);
    }, POLL_MS);
  }

  async stop(): Promise<CheckpointFigures> {
    clearInterval(this.timer);
    await this.polling;
    await this.read();
    await this.client.end();
    return checkpointsOf(this.readings);
  }

  private async read(): Promise<void> {
    const { rows } = await this.client.query<{ ended: string; sync_ms: number }>(this.query);
    const row = rows[0];
    if (row) this.readings.push({ atMs: Date.now(), ended: Number(row.ended), syncMs: Number(row.sync_ms) });
  }
}

/**
 * The checkpoints between the first reading and the last. A sync that the statistics counted between two
 * readings ended after the first of them, and lasted what they added: it lies between the first less that
 * time and the second.
 */
export function checkpointsOf(readings: Reading[]): CheckpointFigures {
  const syncs: CheckpointFigures['syncs'] = [];
  for (let i = 1; i < readings.length; i++) {
    const [before, after] = [readings[i - 1] as Reading, readings[i] as Reading];
    if (after.ended > before.ended) syncs.push({ fromMs: before.atMs - (after.syncMs - before.syncMs), toMs: after.atMs });
  }
  const [first, last] = [readings[0], readings.at(-1)];
  return {
    ended: first && last ? last.ended - first.ended : 0,
    syncSeconds: first && last ? Math.round(last.syncMs - first.syncMs) / 1000 : 0,
    syncs,
  };
}

/** The slow answers that were in flight while a checkpoint synced. */
export function duringSyncs(slow: SlowAnswer[], syncs: CheckpointFigures['syncs']): number {
  return slow.filter(({ endMs, latencyMs }) => syncs.some(({ fromMs, toMs }) => endMs - latencyMs < toMs && endMs > fromMs)).length;
}

/** The figures a measured run keeps: how many answers were slow, and of them how many while a checkpoint synced. */
export function slowAndCheckpoints(slow: SlowAnswer[], checkpoints: CheckpointFigures | undefined) {
  if (!checkpoints) return { slowAnswers: { all: slow.length } };
  const { ended, syncSeconds, syncs } = checkpoints;
  return { slowAnswers: { all: slow.length, duringCheckpointSyncs: duringSyncs(slow, syncs) }, checkpoints: { ended, syncSeconds } };
}
