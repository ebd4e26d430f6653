import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';

const IPC_MODULE = path.join(__dirname, '..', 'scripts', 'bench', 'ipc.ts');

/** What a child process that sends `entries` answers over 100 ms through sendToParent, then leaves, delivers. */
function delivered(entries: number): Promise<{ slow: unknown[] } | undefined> {
  const script = `
    const slow = Array.from({ length: ${entries} }, (_, i) => ({ endMs: 123456.789 + i, latencyMs: 150.25 }));
    require(${JSON.stringify(IPC_MODULE)}).sendToParent({ slow }).then(() => process.disconnect());
  `;
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', '-e', script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let message: { slow: unknown[] } | undefined;
  child.on('message', (m: { slow: unknown[] }) => (message = m));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(message) : reject(new Error(`the child exited with ${code}`))));
  });
}

describe('Benchmark: the load generator reports to its parent', () => {
  it('a result of several MB arrives whole although the child leaves the channel right after sending it', async function () {
    this.timeout(30_000);
    // 100,000 answers are some 4 MB of JSON: far past what a pipe takes at once (sent and then disconnected, lost).
    const message = await delivered(100_000);
    assert.equal(message?.slow.length, 100_000);
    assert.deepEqual(message?.slow[99_999], { endMs: 223455.789, latencyMs: 150.25 });
  });
});
