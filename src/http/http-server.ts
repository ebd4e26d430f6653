import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { maxHeaderBytes } from '../contract/constants';
import { sourceDocument } from '../contract/document-source';
import { newId } from '../data/ids';
import { errorDetail, statusOf, type ErrorCode } from '../errors';
import { lingeringClose } from './lingering-close';
import { baseUrlOf } from './request-context';

// Idle keep-alive connections close after this long (Node's default): long enough for a client's next call,
// short enough that parked connections do not pile up.
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
// How often Node enforces the header and request timeouts; at its default of 30 s they could overrun by that much.
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

type ServerConfig = Pick<Config, 'requestTimeoutSeconds' | 'headersTimeoutSeconds'> & Partial<Pick<Config, 'tls'>>;

/**
 * The app's HTTP server. A client that trickles its headers or body, or opens
 * a connection and sends nothing, is cut off by the timeouts; what Node
 * refuses before the app sees a request (a timeout, headers over maxHeaderBytes,
 * bytes that are not HTTP) is answered in the contract's error shape. With
 * `tls` configured it is an HTTPS server (see reloadCertificate).
 */
export function createHttpServer(app: Express, config: ServerConfig, logger: Logger): http.Server | https.Server {
  const options: http.ServerOptions = {
    requestTimeout: config.requestTimeoutSeconds * 1000,
    headersTimeout: config.headersTimeoutSeconds * 1000,
    maxHeaderSize: maxHeaderBytes,
    connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
  };
  const server = config.tls ? https.createServer({ ...options, ...readCertificate(config.tls) }, app) : http.createServer(options, app);
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
    socket.write(
      rawErrorResponse(code, message, requestId, baseUrlOf(socket, { protocol: config.tls ? 'https' : 'http', host: undefined })),
    );
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
      return { code: 'headers_too_large', message: `The request line and headers are larger than ${maxHeaderBytes / 1024} KB.` };
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

function readCertificate(tls: NonNullable<Config['tls']>): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) };
}

/**
 * Reads TLS_CERT_FILE and TLS_KEY_FILE again (SIGHUP, after a renewal): new
 * connections get the new certificate, open ones keep theirs. A pair that
 * cannot be read or does not match throws, and the current one stays.
 */
export function reloadCertificate(server: https.Server, tls: NonNullable<Config['tls']>): void {
  server.setSecureContext(readCertificate(tls));
}
