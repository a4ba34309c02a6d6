import { answerClientError, clientErrorFor, clientErrorResponse } from './client-error';
import { PassThrough } from 'node:stream';

describe('clientErrorFor', () => {
  it.each([
    ['HPE_HEADER_OVERFLOW', 'HEADERS_TOO_LARGE', 431],
    ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 'PAYLOAD_TOO_LARGE', 413],
    ['ERR_HTTP_REQUEST_TIMEOUT', 'REQUEST_TIMEOUT', 408],
    ['HPE_INVALID_HEADER_TOKEN', 'BAD_REQUEST', 400],
    ['HPE_INVALID_CHUNK_SIZE', 'BAD_REQUEST', 400],
    ['HPE_SOMETHING_NEW', 'BAD_REQUEST', 400],
    [undefined, 'BAD_REQUEST', 400],
  ])('maps %s to %s (%i)', (code, expected, status) => {
    const e = clientErrorFor({ code });
    expect(e.code).toBe(expected);
    expect(e.status).toBe(status);
  });

  it('names the parser finding, and never more than its code', () => {
    expect(clientErrorFor({ code: 'HPE_INVALID_CHUNK_SIZE' }).message).toBe(
      'malformed HTTP request: a chunk size of the chunked body is not a hexadecimal number (HPE_INVALID_CHUNK_SIZE)',
    );
    expect(clientErrorFor({ code: 'HPE_SOMETHING_NEW' }).message).toBe('malformed HTTP request: the request is not valid HTTP/1.1 (HPE_SOMETHING_NEW)');
  });
});

describe('clientErrorResponse', () => {
  it('is a complete HTTP/1.1 response with the envelope, its length and the request id', () => {
    const text = clientErrorResponse({ code: 'HPE_HEADER_OVERFLOW' });
    const [head, body] = text.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(head).toContain(`Content-Length: ${Buffer.byteLength(body)}`);
    expect(head).toContain('Connection: close');
    const rid = /X-Request-Id: (\S+)/.exec(head)![1];
    expect(JSON.parse(body)).toEqual({ error: { code: 'HEADERS_TOO_LARGE', message: expect.any(String), request_id: rid } });
  });
});

describe('answerClientError', () => {
  it('writes nothing on a socket whose response has started, or that the peer reset', () => {
    for (const [code, started] of [['HPE_INVALID_CHUNK_SIZE', true], ['ECONNRESET', false]] as const) {
      const socket = Object.assign(new PassThrough(), { _httpMessage: { headersSent: started } });
      const written: Buffer[] = [];
      socket.on('data', (c: Buffer) => written.push(c));
      answerClientError(Object.assign(new Error('x'), { code }), socket);
      expect(socket.destroyed).toBe(true);
      expect(Buffer.concat(written).length).toBe(0);
    }
  });
});
