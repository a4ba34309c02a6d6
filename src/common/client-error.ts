import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { AppError, ERROR_STATUS } from './errors';

/** What Node's HTTP parser reports about a request it could not read (llhttp's codes). */
const PARSER_MESSAGES: Record<string, string> = {
  HPE_INVALID_HEADER_TOKEN: 'a header name or value holds a character HTTP does not allow',
  HPE_INVALID_CHUNK_SIZE: 'a chunk size of the chunked body is not a hexadecimal number',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length is not a single decimal number',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding: chunked may not both be sent',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding must end in chunked',
  HPE_INVALID_METHOD: 'the request method is not valid',
  HPE_INVALID_URL: 'the request target is not a valid URL',
  HPE_INVALID_VERSION: 'the HTTP version is not valid',
  HPE_INVALID_CONSTANT: 'the request line is malformed',
  HPE_LF_EXPECTED: 'a line of the request does not end in CRLF',
  HPE_CR_EXPECTED: 'a line of the request does not end in CRLF',
  HPE_STRICT: 'the request breaks HTTP syntax',
};

/** The envelope for a request the HTTP parser refused, before any route (or Nest) saw it. */
export function clientErrorFor(err: { code?: unknown }): AppError {
  const code = typeof err.code === 'string' ? err.code : '';
  if (code === 'HPE_HEADER_OVERFLOW') return new AppError('HEADERS_TOO_LARGE', 'the request line and headers are larger than this server accepts');
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return new AppError('PAYLOAD_TOO_LARGE', 'the chunk extensions of the body are too large');
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT') return new AppError('REQUEST_TIMEOUT', 'the request was not received in time');
  const what = PARSER_MESSAGES[code] ?? 'the request is not valid HTTP/1.1';
  return new AppError('BAD_REQUEST', code.startsWith('HPE_') ? `malformed HTTP request: ${what} (${code})` : `malformed HTTP request: ${what}`);
}

/** The whole HTTP response, as bytes for the socket: the parser is gone, so nothing else can write it. */
export function clientErrorResponse(err: { code?: unknown }): string {
  const e = clientErrorFor(err);
  const requestId = `req_${randomUUID().replace(/-/g, '')}`;
  const body = JSON.stringify({ error: { code: e.code, message: e.message, request_id: requestId } });
  const status = ERROR_STATUS[e.code];
  return (
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Bad Request'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    'Cache-Control: no-store\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

type ClientSocket = Duplex & { _httpMessage?: { headersSent?: boolean } | null };

/**
 * A `clientError` listener for the HTTP server (express: `server.on('clientError', …)`; fastify:
 * its `clientErrorHandler` option). Like Node's default it answers only when no response has
 * started on the socket, then closes the connection; unlike it, the answer is the JSON envelope.
 */
export function answerClientError(err: Error & { code?: unknown }, socket: Duplex): void {
  const s = socket as ClientSocket;
  if (err.code === 'ECONNRESET' || !s.writable || s._httpMessage?.headersSent) {
    s.destroy();
    return;
  }
  s.end(clientErrorResponse(err), () => s.destroy());
}
