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

function shortUrl(url: string): string {
  if (!url) return '';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + '/dist/'.length);
  return url.replace(/^file:\/\//, '');
}

export function summarizeProfile(file: string, window?: { fromUs: number; toUs: number }, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const overlaps = window !== undefined && window.fromUs < profile.endTime && window.toUs > profile.startTime;

  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
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
  }
  const ranked = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, pct: total > 0 ? Math.round((us / total) * 1000) / 10 : 0 }));
  return {
    file,
    seconds: Math.round(total / 1e4) / 100,
    windowed: overlaps,
    idlePct: total > 0 ? Math.round((idle / total) * 1000) / 10 : 0,
    functions: ranked(byFunction),
    packages: ranked(byPackage),
  };
}

export function formatProfile(label: string, s: ProfileSummary): string {
  const lines = [
    `Profile ${label}: ${s.seconds} s of samples${s.windowed ? ' (measured window only)' : ' (whole process)'}, main thread idle ${s.idlePct}%`,
    `  ${s.file}`,
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
