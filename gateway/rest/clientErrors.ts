// Requests Node's HTTP layer refuses before Express sees them (an unknown method, a request line
// and headers over MAX_HEADER_BYTES, a broken Content-Length, a request too slow to arrive, a
// CONNECT tunnel) get the documented error body too, written straight to the socket, and the
// connection is closed.
import { type IncomingMessage, STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { newCorrelationId } from '../../core/canon/ids';
import { ERROR_CODES, errorBody, type ErrorCode } from '../../core/errors';
import type { Logger } from '../../platform/log';

/** Node's default, named: the request line plus every header must fit in 16 KiB. */
export const MAX_HEADER_BYTES = 16 * 1024;

interface ClientError extends Error {
  readonly code?: string;
  /** The bytes the parser had when it gave up (Node sets it for parser errors). */
  readonly rawPacket?: Buffer;
}

/** A HEAD request's answer carries no body (RFC 9110 §9.3.2): bytes after it would be read as the next answer. */
function isHeadRequest(error: ClientError): boolean {
  return error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
}

function refusalOf(error: ClientError): { code: ErrorCode; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        code: 'REQUEST_HEADERS_TOO_LARGE',
        message: `The request line and headers are larger than ${MAX_HEADER_BYTES} bytes.`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', message: ERROR_CODES.REQUEST_TIMEOUT.message };
    case 'HPE_INVALID_METHOD':
      return {
        code: 'REQUEST_INVALID',
        message: 'The request uses an HTTP method this server does not know.',
      };
    default:
      return {
        code: 'REQUEST_INVALID',
        message: `The request is not valid HTTP/1.1 (${error.code ?? 'unreadable'}).`,
      };
  }
}

/** A response already under way on this socket (a pipelined request) cannot be followed by ours. */
function responseStarted(socket: Duplex): boolean {
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return current?.headersSent === true;
}

/** Writes one error answer on a raw socket and closes it; `head`: the headers only. */
function answerOnSocket(
  socket: Duplex,
  code: ErrorCode,
  message: string,
  options: RawAnswerOptions,
  detail: Record<string, unknown>,
  head = false,
): void {
  const correlationId = newCorrelationId();
  const status = ERROR_CODES[code].status;
  const body = JSON.stringify(
    errorBody(code, { message, correlationId, docsBaseUrl: options.docsBaseUrl }),
  );
  options.log.info({ correlationId, status, ...detail }, 'request refused by the HTTP layer');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `x-correlation-id: ${correlationId}\r\n` +
      'connection: close\r\n\r\n' +
      (head ? '' : body),
  );
}

interface RawAnswerOptions {
  readonly docsBaseUrl: string | null;
  readonly log: Logger;
}

export function answerClientErrors(server: Server, options: RawAnswerOptions): void {
  server.on('clientError', (error: ClientError, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) {
      socket.destroy();
      return;
    }
    const { code, message } = refusalOf(error);
    answerOnSocket(
      socket,
      code,
      message,
      options,
      { parserError: error.code },
      isHeadRequest(error),
    );
  });
  // Without a listener Node closes a CONNECT request's connection without a word.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    answerOnSocket(
      socket,
      'REQUEST_INVALID',
      'CONNECT (a proxy tunnel) is not served here.',
      options,
      { method: 'CONNECT' },
    );
  });
}
