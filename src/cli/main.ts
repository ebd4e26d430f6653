import { runIngestctl } from './ingestctl';

runIngestctl(process.argv.slice(2), {
  env: process.env,
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
}).then((code) => {
  process.exitCode = code;
});
