import { setFlagsFromString } from 'node:v8';
import type { Config } from './config';

/**
 * The V8 flags the server sets as it starts. V8 reads both as it goes, for every thread's heap (the
 * SQLite writer thread's included), so setting them at startup is as good as on the command line.
 */
export function v8FlagsFor(config: Pick<Config, 'heapGrowingPercent'>): string[] {
  // V8 allocates an object literal's later objects straight in old space once most of its objects outlived a
  // scavenge. A request's objects do when it spans one (most ingest requests, under load), so V8 pretenured them;
  // dead within milliseconds, they kept the young objects they pointed to alive through every scavenge until the
  // next full collection, so those were promoted too, and old space filled with garbage to mark. Without it,
  // PostgreSQL's quick runs: the server's CPU 16-21 ms per 1,000 events (mean 18), not 21-23 (mean 22), at
  // 30,200-37,100 events/s, not 27,500-32,600; SQLite's unchanged within its spread (make bench, 2026-11-28).
  const flags = ['--no-allocation-site-pretenuring'];
  // Left to itself, under ingest load V8 let old space reach about four times what a collection kept: 25-30 MB
  // more peak RSS, for no CPU saved (make bench).
  if (config.heapGrowingPercent > 0) flags.push(`--heap-growing-percent=${config.heapGrowingPercent}`);
  return flags;
}

export function applyV8Flags(config: Pick<Config, 'heapGrowingPercent'>): void {
  for (const flag of v8FlagsFor(config)) setFlagsFromString(flag);
}
