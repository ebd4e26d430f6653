import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { v8FlagsFor } from '../src/v8-flags';

const FLAGS_MODULE = path.join(__dirname, '..', 'src', 'v8-flags.ts');

/**
 * The scavenges of a new process that keeps every object one object literal makes, after applying the
 * server's V8 flags (`apply`) or not: with pretenuring V8 soon allocates that literal's objects in old space, and scavenges stop.
 */
function scavengesKeepingEverything(apply: boolean): number {
  const script = `
    if (${apply}) require(${JSON.stringify(FLAGS_MODULE)}).applyV8Flags({ heapGrowingPercent: 0 });
    const { PerformanceObserver, constants } = require('node:perf_hooks');
    let scavenges = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
    }).observe({ entryTypes: ['gc'] });
    const kept = [];
    for (let i = 0; i < 3_000_000; i++) kept.push({ i, pair: [i, i] });
    setTimeout(() => process.stdout.write(String(scavenges)), 200);
  `;
  const child = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  return Number(child.stdout);
}

describe('V8 flags of the server', () => {
  it('turns allocation-site pretenuring off, and it takes effect when set at startup', function () {
    this.timeout(60_000);
    assert.ok(v8FlagsFor({ heapGrowingPercent: 0 }).includes('--no-allocation-site-pretenuring'));
    const applied = scavengesKeepingEverything(true);
    // V8's own pretenuring is a heuristic, and once (in a CI run) it did not start (42 scavenges against 41):
    // the fewest of up to three processes with V8's defaults.
    let pretenuring = Infinity;
    for (let i = 0; i < 3 && !(applied > 2 * pretenuring); i++) pretenuring = Math.min(pretenuring, scavengesKeepingEverything(false));
    assert.ok(pretenuring > 0, 'the probe made scavenges at all');
    assert.ok(applied > 2 * pretenuring, `with the server's flags ${applied} scavenges, with V8's defaults ${pretenuring}`);
  });

  it('sets the heap growing percent only when configured', () => {
    assert.deepEqual(v8FlagsFor({ heapGrowingPercent: 0 }), ['--no-allocation-site-pretenuring']);
    assert.deepEqual(v8FlagsFor({ heapGrowingPercent: 50 }), ['--no-allocation-site-pretenuring', '--heap-growing-percent=50']);
  });
});
