/**
 * Sends `message` to the parent process (run alone, prints it as a line) and resolves once it is written. A
 * channel closed before then drops what was still queued: a load generator's result of a few hundred KB (its
 * answers over 100 ms at 50 connections) was lost so, the generator gone without a result.
 */
export function sendToParent(message: unknown): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) {
    process.stdout.write(JSON.stringify(message) + '\n');
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    send(message, undefined, undefined, (err: Error | null) => (err ? reject(err) : resolve()));
  });
}
