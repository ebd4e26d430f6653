import type { Socket } from 'node:net';

// Long enough for the answer to reach a client that is still uploading and for it to close; short enough
// that a client ignoring the close cannot hold the connection (Apache's lingering close waits 2 s as well).
const LINGER_MS = 2_000;

/**
 * Closes a connection after an early answer (413 before the upload was read,
 * 408 or 431 before the request was) without losing that answer. Closing a
 * socket with unread input makes the kernel reset the connection, and a reset
 * can discard the answer before the client has read it. So our side ends
 * (the answer, then FIN), what still arrives is read and dropped, and the
 * socket closes once the client closes its side, or after LINGER_MS.
 */
export function lingeringClose(socket: Socket): void {
  socket.end();
  socket.on('data', () => {});
  socket.resume();
  socket.once('end', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
