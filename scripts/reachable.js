// Exits 0 when the postgres:// or redis:// server in argv[2] accepts a TCP connection within 2 s.
const net = require('node:net');

const url = new URL(process.argv[2]);
const port = Number(url.port) || (url.protocol.startsWith('redis') ? 6379 : 5432);
const socket = net.connect({ host: url.hostname, port, timeout: 2000 });
socket.on('connect', () => {
  socket.destroy();
  process.exit(0);
});
socket.on('timeout', () => process.exit(1));
socket.on('error', () => process.exit(1));
