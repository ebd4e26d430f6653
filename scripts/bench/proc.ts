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

/**
 * CPU seconds (user + system) used so far, and of those the seconds in the kernel on its behalf (system time: socket
 * writes and reads, file I/O), from one reading: a profiler that samples JavaScript charges the time around a native
 * call to that call, and cannot tell the two apart.
 */
export interface CpuTimes {
  total: number;
  system: number;
}

function cpuTimesIn(file: string): CpuTimes {
  try {
    const stat = readFileSync(file, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]) / TICKS_PER_SECOND;
    const system = Number(fields[12]) / TICKS_PER_SECOND;
    return { total: user + system, system };
  } catch {
    return { total: 0, system: 0 };
  }
}

/** CPU times of each thread of a process so far, by thread id (the main thread's is the pid). */
function threadCpuTimesOf(pid: number): Map<number, CpuTimes> {
  try {
    return new Map(readdirSync(`/proc/${pid}/task`).map((tid) => [Number(tid), cpuTimesIn(`/proc/${pid}/task/${tid}/stat`)]));
  } catch {
    return new Map();
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
  pids: Map<number, CpuTimes>;
  /** The first process's threads. */
  threads: Map<number, CpuTimes>;
  postgres: Map<number, CpuTimes>;
  machine: { busy: number; total: number };
}

/** `postgresPids`: the PostgreSQL processes working for the benchmark (its backends, the WAL writer, ...). */
export function readCpu(pids: number[], postgresPids: number[] = []): CpuReading {
  const timesOf = (ids: number[]) => new Map(ids.map((pid) => [pid, cpuTimesIn(`/proc/${pid}/stat`)]));
  return {
    at: performance.now(),
    pids: timesOf(pids),
    threads: pids[0] === undefined ? new Map() : threadCpuTimesOf(pids[0]),
    postgres: timesOf(postgresPids),
    machine: machineCpu(),
  };
}

/** CPU use between two readings, in % of one core per process (200% = both cores of a 2-core machine). */
export function cpuBetween(
  start: CpuReading,
  end: CpuReading,
): {
  pids: Map<number, number>;
  /** Of each process's, in the kernel. */
  systemPids: Map<number, number>;
  threads: Map<number, number>;
  postgres: number;
  postgresSystem: number;
  machineBusy: number;
  machineBusyCores: number;
} {
  const seconds = (end.at - start.at) / 1000;
  const pct = (used: number) => Math.round((used / seconds) * 100);
  // The seconds (of `part`) each process used between the readings; one absent from the first started since.
  const used = (from: Map<number, CpuTimes>, to: Map<number, CpuTimes>, part: keyof CpuTimes) =>
    [...to].map(([id, times]) => [id, times[part] - (from.get(id)?.[part] ?? 0)] as const);
  const each = (from: Map<number, CpuTimes>, to: Map<number, CpuTimes>, part: keyof CpuTimes) =>
    new Map(used(from, to, part).map(([id, u]) => [id, pct(u)]));
  const summed = (from: Map<number, CpuTimes>, to: Map<number, CpuTimes>, part: keyof CpuTimes) =>
    pct(used(from, to, part).reduce((sum, [, u]) => sum + u, 0));
  const machineTotal = end.machine.total - start.machine.total;
  return {
    pids: each(start.pids, end.pids, 'total'),
    systemPids: each(start.pids, end.pids, 'system'),
    threads: each(start.threads, end.threads, 'total'),
    postgres: summed(start.postgres, end.postgres, 'total'),
    postgresSystem: summed(start.postgres, end.postgres, 'system'),
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
