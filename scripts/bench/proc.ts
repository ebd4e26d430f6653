// Linux /proc readings: a process's memory and CPU time, the machine's CPU time,
// and PostgreSQL processes' CPU time (to see where the cores went).
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ; `getconf CLK_TCK` is 100 on Linux x86 and arm

/** VmRSS and VmHWM (peak RSS) of a process, in MB; undefined once it is gone. */
export function memoryOf(pid: number): { rssMb: number; hwmMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSecondsOf(pid: number): number {
  return cpuSecondsIn(`/proc/${pid}/stat`);
}

/** CPU seconds each thread of a process has used so far, by thread id (the main thread's is the pid). */
export function threadCpuSecondsOf(pid: number): Map<number, number> {
  try {
    return new Map(readdirSync(`/proc/${pid}/task`).map((tid) => [Number(tid), cpuSecondsIn(`/proc/${pid}/task/${tid}/stat`)]));
  } catch {
    return new Map();
  }
}

function cpuSecondsIn(file: string): number {
  try {
    const stat = readFileSync(file, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The machine's busy and total CPU seconds so far (all cores). */
export function machineCpu(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] as string;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number) as number[];
  const total = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (idle ?? 0) + (iowait ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  return { busy: (total - (idle ?? 0) - (iowait ?? 0)) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

/** A point-in-time reading of where CPU time went, to be diffed against a later one. */
export interface CpuReading {
  at: number;
  pids: Map<number, number>;
  /** The first process's threads. */
  threads: Map<number, number>;
  postgres: Map<number, number>;
  machine: { busy: number; total: number };
}

/** `postgresPids`: the PostgreSQL processes working for the benchmark (its backends, the WAL writer, ...). */
export function readCpu(pids: number[], postgresPids: number[] = []): CpuReading {
  return {
    at: performance.now(),
    pids: new Map(pids.map((pid) => [pid, cpuSecondsOf(pid)])),
    threads: pids[0] === undefined ? new Map() : threadCpuSecondsOf(pids[0]),
    postgres: new Map(postgresPids.map((pid) => [pid, cpuSecondsOf(pid)])),
    machine: machineCpu(),
  };
}

/** CPU use between two readings, in % of one core per process (200% = both cores of a 2-core machine). */
export function cpuBetween(
  start: CpuReading,
  end: CpuReading,
): { pids: Map<number, number>; threads: Map<number, number>; postgres: number; machineBusy: number; machineBusyCores: number } {
  const seconds = (end.at - start.at) / 1000;
  const pct = (used: number) => Math.round((used / seconds) * 100);
  const pids = new Map<number, number>();
  for (const [pid, used] of end.pids) pids.set(pid, pct(used - (start.pids.get(pid) ?? 0)));
  const threads = new Map<number, number>();
  for (const [tid, used] of end.threads) threads.set(tid, pct(used - (start.threads.get(tid) ?? 0)));
  let postgres = 0;
  for (const [pid, used] of end.postgres) postgres += used - (start.postgres.get(pid) ?? 0);
  const machineTotal = end.machine.total - start.machine.total;
  return {
    pids,
    threads,
    postgres: pct(postgres),
    machineBusy: machineTotal > 0 ? Math.round(((end.machine.busy - start.machine.busy) / machineTotal) * 100) : 0,
    machineBusyCores: pct(end.machine.busy - start.machine.busy),
  };
}

/** How busy the machine is over `ms`, in % of all cores. */
export async function machineBusyOver(ms: number): Promise<number> {
  const start = machineCpu();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const end = machineCpu();
  const total = end.total - start.total;
  return total > 0 ? Math.round(((end.busy - start.busy) / total) * 100) : 0;
}
