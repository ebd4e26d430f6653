import http from 'node:http';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { sourceDocument } from '../contract/document-source';
import { newId } from '../data/ids';
import { errorDetail, statusOf, type ErrorCode } from '../errors';
import { lingeringClose } from './lingering-close';

// Idle keep-alive connections close after this long (Node's default): long enough for a client's next call,
// short enough that parked connections do not pile up.
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
// How often Node enforces the header and request timeouts; at its default of 30 s they could overrun by that much.
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

type ServerConfig = Pick<Config, 'requestTimeoutSeconds' | 'headersTimeoutSeconds'>;

/**
 * The app's HTTP server. A client that trickles its headers or body, or opens
 * a connection and sends nothing, is cut off by the timeouts; what Node
 * refuses before the app sees a request (a timeout, headers over 16 KB,
 * bytes that are not HTTP) is answered in the contract's error shape.
 */
export function createHttpServer(app: Express, config: ServerConfig, logger: Logger): http.Server {
  const server = http.createServer(
    {
      requestTimeout: config.requestTimeoutSeconds * 1000,
      headersTimeout: config.headersTimeoutSeconds * 1000,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    app,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const answered = new WeakSet<Socket>();
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // Once answered, the parser may still complain about what follows: the lingering close deals with it.
    if (answered.has(socket)) return;
    if (!socket.writable || responseUnderway(socket)) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    const { code, message } = refusalOf(err, config);
    const requestId = newId('req');
    logger.info({ requestId, reason: err.code, status: statusOf(code) }, 'refused before the app');
    socket.write(rawErrorResponse(code, message, requestId, baseUrlOf(socket)));
    lingeringClose(socket);
  });
  return server;
}

function refusalOf(err: NodeJS.ErrnoException, config: ServerConfig): { code: ErrorCode; message: string } {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        code: 'request_timeout',
        message: `The request was not received in time: headers within ${config.headersTimeoutSeconds} s, the whole request within ${config.requestTimeoutSeconds} s.`,
      };
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'headers_too_large', message: 'The request line and headers are larger than 16 KB.' };
    default:
      return { code: 'invalid_body', message: 'The request is not valid HTTP/1.1.' };
  }
}

/** Whether the app has begun answering on this socket: then bytes of ours would corrupt its response. */
function responseUnderway(socket: Socket): boolean {
  // Node's own clientError fallback makes the same check on the socket's in-flight response.
  return (socket as Socket & { _httpMessage?: http.ServerResponse })._httpMessage?.headersSent === true;
}

/** No request was parsed, so neither the Host header nor Express is there: the answer is written by hand. */
function rawErrorResponse(code: ErrorCode, message: string, requestId: string, baseUrl: string): string {
  const status = statusOf(code);
  const body = JSON.stringify({ error: errorDetail(code, message, requestId, baseUrl) });
  return [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    `X-API-Version: ${String(sourceDocument().info['x-api-version'])}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** The address the client reached, for docsUrl. */
function baseUrlOf(socket: Socket): string {
  const host = socket.localAddress?.includes(':') ? `[${socket.localAddress}]` : socket.localAddress;
  return `http://${host ?? 'localhost'}:${socket.localPort ?? ''}`;
}
