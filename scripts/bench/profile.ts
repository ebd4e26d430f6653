// Summarizes a V8 .cpuprofile (node --cpu-prof): self time by function and by package,
// optionally only the samples inside a time window (monotonic clock, microseconds,
// the clock process.hrtime uses, so a window measured in another process applies).
// Standalone: node dist/scripts/bench/profile.js FILE.cpuprofile [TOP]
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  pct: number;
}

export interface ProfileSummary {
  file: string;
  /** Seconds of samples summarized; `windowed` false when the window did not overlap the profile. */
  seconds: number;
  windowed: boolean;
  /** Share of samples the main thread was idle (waiting for I/O, e.g. the database). */
  idlePct: number;
  functions: ProfileEntry[];
  packages: ProfileEntry[];
  /** Coarse layers of the request path (see layerOf). */
  layers: ProfileEntry[];
}

/** Where a function lives: a package, node's own code, the project's code, or V8 itself. */
function packageOf(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (url.startsWith('node:')) return url;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1] as string;
  const project = /\/dist\/(src\/.*?)\.js$/.exec(url) ?? /\/(src\/.*?)\.[jt]s$/.exec(url);
  if (project) return project[1] as string;
  return url.replace(/^file:\/\//, '');
}

const layerRules: [RegExp, string][] = [
  [/^(better-sqlite3|pg|pg-protocol|pg-pool|pg-types|postgres-.*)$/, 'database driver (pg / better-sqlite3 JS side)'],
  [/^kysely$/, 'query builder (kysely: compile, parse, run)'],
  [/^(ajv|ajv-formats|ajv-.*|express-openapi-validator|src\/contract\/.*|src\/domain\/judgement)$/, 'validation (ajv, openapi validator)'],
  [/^(express|router|helmet|pino|pino-http|pino-std-serializers|sonic-boom|thread-stream|raw-body|content-type|cors|on-finished|finalhandler|send|http-errors|iconv-lite|type-is|mime-types|statuses|depd|path-to-regexp|qs|node:_http_.*|node:http|node:net|node:stream|node:internal\/streams\/.*|node:internal\/http|node:internal\/stream_base_commons|node:events|src\/http\/.*|src\/routes\/.*|src\/app|src\/handlers\/.*|src\/domain\/(authenticator|rate-limit\/.*))$/, 'HTTP stack (node http, express, middleware, handlers)'],
  [/^node:internal\/crypto\/.*$/, 'crypto (random ids, hashes)'],
  [/^src\/(domain|data)\/.*$/, 'service domain and data code'],
];

/** A coarse layer of the request path, for the question "where does a request's time go". */
function layerOf(frame: CallFrame, pkg: string): string {
  // better-sqlite3 runs SQLite inside its native calls, which V8 charges to the calling JS frame.
  if (frame.functionName === 'executeQuery' && frame.url.includes('dialect/sqlite/sqlite-driver')) return 'SQLite itself (native, under kysely executeQuery)';
  if (!frame.url) {
    if (/^(writev|writeBuffer|writeUtf8String|writeLatin1String|readv?|onStreamRead)$/.test(frame.functionName)) return 'socket I/O as V8 samples it (native writes / reads; the kernel part is the system time)';
    if (frame.functionName === '(idle)') return '(idle: waiting for I/O)';
    if (frame.functionName === '(garbage collector)') return '(garbage collector)';
    return 'other native / V8 (program, JSON, microtasks)';
  }
  for (const [rule, layer] of layerRules) if (rule.test(pkg)) return layer;
  return `other: ${pkg}`;
}

function shortUrl(url: string): string {
  if (!url) return '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + '/dist/'.length);
  return url.replace(/^file:\/\//, '');
}

/** Entries under `min` merged into one "other (each < 1%)". */
function mergeSmall(m: Map<string, number>, min: number): Map<string, number> {
  const merged = new Map<string, number>();
  let small = 0;
  for (const [name, us] of m) {
    if (us < min) small += us;
    else merged.set(name, us);
  }
  if (small > 0) merged.set('other (each < 1%)', small);
  return merged;
}

export function summarizeProfile(file: string, window?: { fromUs: number; toUs: number }, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const overlaps = window !== undefined && window.fromUs < profile.endTime && window.toUs > profile.startTime;

  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const byLayer = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    // A sample stands for the time until the next one.
    const weight = profile.timeDeltas[i + 1] ?? 0;
    if (overlaps && (t < window.fromUs || t > window.toUs)) continue;
    const frame = frames.get(profile.samples[i] as number) as CallFrame;
    total += weight;
    if (frame.functionName === '(idle)') idle += weight;
    const name = `${frame.functionName || '(anonymous)'}${frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + weight);
    const pkg = packageOf(frame);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + weight);
    const layer = layerOf(frame, pkg);
    byLayer.set(layer, (byLayer.get(layer) ?? 0) + weight);
  }
  const ranked = (m: Map<string, number>, limit = top) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, us]) => ({ name, pct: total > 0 ? Math.round((us / total) * 1000) / 10 : 0 }));
  return {
    file,
    seconds: Math.round(total / 1e4) / 100,
    windowed: overlaps,
    idlePct: total > 0 ? Math.round((idle / total) * 1000) / 10 : 0,
    functions: ranked(byFunction),
    packages: ranked(byPackage),
    layers: ranked(mergeSmall(byLayer, total / 100), Infinity),
  };
}

export function formatProfile(label: string, s: ProfileSummary): string {
  const lines = [
    `Profile ${label}: ${s.seconds} s of samples${s.windowed ? ' (measured window only)' : ' (whole process)'}, thread idle ${s.idlePct}%`,
    `  ${s.file}`,
    '  self time by layer:',
    ...s.layers.map((l) => `    ${l.pct.toFixed(1).padStart(5)}%  ${l.name}`),
    '  self time by function:',
    ...s.functions.map((f) => `    ${f.pct.toFixed(1).padStart(5)}%  ${f.name}`),
    '  self time by package / module:',
    ...s.packages.map((p) => `    ${p.pct.toFixed(1).padStart(5)}%  ${p.name}`),
  ];
  return lines.join('\n');
}

if (require.main === module) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node dist/scripts/bench/profile.js FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  process.stdout.write(formatProfile(file, summarizeProfile(file, undefined, Number(process.argv[3] ?? 25))) + '\n');
}
