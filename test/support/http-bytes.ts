import http from 'node:http';
import net from 'node:net';

export interface BytesResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The parsed JSON body; undefined when there was none. */
  body: Record<string, unknown>;
  text: string;
}

export interface BytesRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Sent exactly as given (supertest would JSON-serialize a Buffer sent as application/json). */
  body?: Buffer;
  /** Send the body chunked instead of with Content-Length. */
  chunked?: boolean;
}

/** One request with an exact body to a listening server on 127.0.0.1. */
export function sendBytes(port: number, request: BytesRequest, agent?: http.Agent): Promise<BytesResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...request.headers };
    if (request.body && !request.chunked) headers['Content-Length'] = String(request.body.length);
    let answered = false;
    const req = http.request({ host: '127.0.0.1', port, path: request.path, method: request.method, headers, agent }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode as number, headers: res.headers, body: text ? JSON.parse(text) : undefined, text });
      });
    });
    // A server that never answers is a failure of its own, not a test that hangs.
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${request.method} ${request.path} within 10 s`)));
    // A server that answers early (413) may reset the connection while the body is still going out.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    if (request.body && request.chunked) {
      for (let i = 0; i < request.body.length; i += 64 * 1024) req.write(request.body.subarray(i, i + 64 * 1024));
      req.end();
    } else {
      req.end(request.body);
    }
  });
}

/**
 * Writes `head`, then each chunk with a pause between, on a raw connection;
 * resolves with every byte that came back once the server closed it, and how
 * much of the chunks had gone out by then.
 */
export function rawExchange(
  port: number,
  head: string | Buffer,
  chunks: Buffer[] = [],
  pauseMs = 0,
): Promise<{ response: string; sentBytes: number }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let response = '';
    let sentBytes = 0;
    let closed = false;
    socket.on('data', (d) => (response += String(d)));
    socket.on('error', () => {});
    socket.on('close', () => {
      closed = true;
      resolve({ response, sentBytes });
    });
    socket.write(head);
    const sendNext = (i: number) => {
      if (closed || i >= chunks.length) return;
      socket.write(chunks[i] as Buffer, () => {
        sentBytes += (chunks[i] as Buffer).length;
        setTimeout(() => sendNext(i + 1), pauseMs);
      });
    };
    sendNext(0);
  });
}

/** A raw HTTP/1.1 response as status, lower-cased headers and parsed JSON body. */
export function parseRawResponse(text: string): { status: number; headers: Record<string, string>; body: Record<string, unknown> } {
  const [head = '', body = ''] = text.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}
