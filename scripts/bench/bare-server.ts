// The bare HTTP ceiling: a node:http server that only reads the body, JSON.parses it
// and answers 202. Run in its own process; argv[2] is the port. Prints "ready" when listening.
import http from 'node:http';

const port = Number(process.argv[2] ?? 0);

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let accepted: number;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { events?: unknown[] };
      accepted = Array.isArray(body.events) ? body.events.length : 0;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const text = JSON.stringify({ accepted, rejected: 0 });
    res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});

server.listen(port, '127.0.0.1', () => process.stdout.write('ready\n'));
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
});
