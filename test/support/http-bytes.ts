import http from 'node:http';

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
