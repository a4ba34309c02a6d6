import { AppError } from '../common/errors';
import { MAX_URL_LENGTH, normaliseHost, parseDestinationUrl } from './url';

const STD = { allowNonstandardPort: false };
const ANY_PORT = { allowNonstandardPort: true };

function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected an AppError');
}

describe('parseDestinationUrl: URL shape errors are VALIDATION_ERROR "url must ..."', () => {
  it.each<[string, unknown, RegExp]>([
    ['relative path', '/hooks', /^url must be a valid absolute https URL$/],
    ['no scheme', 'example.com/hook', /^url must be a valid absolute https URL$/],
    ['scheme-relative', '//example.com/hook', /^url must be a valid absolute https URL$/],
    ['empty', '', /^url must not be empty$/],
    ['not a string', 42, /^url must be a string$/],
    ['null', null, /^url must be a string$/],
    ['http', 'http://example.com/', /^url must use the https scheme$/],
    ['HTTP upper', 'HTTP://example.com/', /^url must use the https scheme$/],
    ['ftp', 'ftp://example.com/', /^url must use the https scheme$/],
    ['file', 'file:///etc/passwd', /^url must use the https scheme$/],
    ['gopher', 'gopher://127.0.0.1:6379/_INFO', /^url must use the https scheme$/],
    ['javascript', 'javascript:alert(1)', /^url must use the https scheme$/],
    ['data', 'data:text/plain,hi', /^url must use the https scheme$/],
    ['ws', 'wss://example.com/', /^url must use the https scheme$/],
    ['userinfo user only', 'https://evil@127.0.0.1/', /^url must not contain user credentials$/],
    ['userinfo user:pass', 'https://user:pass@example.com/', /^url must not contain user credentials$/],
    ['userinfo password only', 'https://:pass@example.com/', /^url must not contain user credentials$/],
    ['empty userinfo', 'https://@example.com/', /^url must not contain user credentials$/],
    ['empty user and password', 'https://:@example.com/', /^url must not contain user credentials$/],
    ['userinfo disguising host', 'https://example.com@127.0.0.1/', /^url must not contain user credentials$/],
    ['encoded @ in userinfo', 'https://1.1.1.1%2f@evil.test/', /^url must not contain user credentials$/],
    ['too long', `https://example.com/${'a'.repeat(MAX_URL_LENGTH)}`, /^url must be at most 2048 characters$/],
    ['grows past the limit when encoded', `https://example.com/${'é'.repeat(700)}`, /^url must be at most 2048 characters$/],
    ['tab in host', 'https://exa\tmple.com/', /^url must not contain whitespace or control characters$/],
    ['tab in loopback', 'https://127.0.0.1\t/', /^url must not contain whitespace or control characters$/],
    ['newline in host', 'https://loc\nalhost/', /^url must not contain whitespace or control characters$/],
    ['CR in path', 'https://example.com/a\rb', /^url must not contain whitespace or control characters$/],
    ['leading space', ' https://example.com/', /^url must not contain whitespace or control characters$/],
    ['trailing newline', 'https://example.com/\n', /^url must not contain whitespace or control characters$/],
    ['space in host', 'https://exa mple.com/', /^url must not contain whitespace or control characters$/],
    ['NUL', 'https://example.com\u0000.evil/', /^url must not contain whitespace or control characters$/],
    ['DEL', 'https://example.com/\u007f', /^url must not contain whitespace or control characters$/],
    ['NBSP', 'https://example.com\u00a0/', /^url must not contain whitespace or control characters$/],
    ['soft hyphen', 'https://loc\u00adalhost/', /^url must not contain whitespace or control characters$/],
    ['zero-width space', 'https://local\u200bhost/', /^url must not contain whitespace or control characters$/],
    ['ideographic space', 'https://example.com\u3000/', /^url must not contain whitespace or control characters$/],
    ['line separator', 'https://example.com/\u2028', /^url must not contain whitespace or control characters$/],
    ['BOM', '\ufeffhttps://example.com/', /^url must not contain whitespace or control characters$/],
    ['percent-encoded NUL host', 'https://ex%00ample.com/', /^url must be a valid absolute https URL$/],
    ['percent-encoded space host', 'https://ex%20ample.com/', /^url must be a valid absolute https URL$/],
    ['IPv6 zone id', 'https://[fe80::1%25eth0]/', /^url must be a valid absolute https URL$/],
    ['bad IPv4', 'https://256.0.0.1/', /^url must be a valid absolute https URL$/],
    ['five-part IPv4', 'https://1.2.3.4.5/', /^url must be a valid absolute https URL$/],
    ['port too large', 'https://example.com:65536/', /^url must be a valid absolute https URL$/],
    ['empty label', 'https://a..b/', /^url must have a valid host name$/],
    ['only dots', 'https://../', /^url must have a valid host name$/],
    ['label too long', `https://${'a'.repeat(64)}.com/`, /^url must have a valid host name$/],
    ['port 0 (flag off)', 'https://example.com:0/', /^url must have a port between 1 and 65535$/],
    ['port 0 (flag on)', 'https://example.com:0/', /^url must have a port between 1 and 65535$/],
  ])('%s', (name, raw, message) => {
    const opts = name.includes('flag on') ? ANY_PORT : STD;
    const err = errorOf(() => parseDestinationUrl(raw, opts));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.status).toBe(400);
    expect(err.message).toMatch(message);
  });

  it('accepts exactly 2048 characters', () => {
    const base = 'https://example.com/';
    const raw = base + 'a'.repeat(MAX_URL_LENGTH - base.length);
    expect(raw).toHaveLength(MAX_URL_LENGTH);
    expect(parseDestinationUrl(raw, STD).host).toBe('example.com');
  });
});

describe('parseDestinationUrl: ports', () => {
  it.each<[string, boolean, number]>([
    ['https://example.com/', false, 443],
    ['https://example.com:443/', false, 443],
    ['https://example.com:0443/', false, 443],
    ['https://example.com:/', false, 443],
    ['https://example.com:8443/', true, 8443],
    ['https://example.com:1/', true, 1],
    ['https://example.com:65535/', true, 65535],
    ['https://example.com:443/', true, 443],
    ['https://[2606:4700:4700::1111]:8443/', true, 8443],
  ])('%s (flag=%s) → port %d', (raw, allowNonstandardPort, port) => {
    expect(parseDestinationUrl(raw, { allowNonstandardPort }).port).toBe(port);
  });

  it.each(['https://example.com:8443/', 'https://example.com:80/', 'https://example.com:22/', 'https://example.com:65535/', 'https://1.1.1.1:6379/'])(
    '%s without the flag is WEBHOOK_DESTINATION_BLOCKED',
    (raw) => {
      const err = errorOf(() => parseDestinationUrl(raw, STD));
      expect(err.code).toBe('WEBHOOK_DESTINATION_BLOCKED');
      expect(err.status).toBe(422);
      expect(err.message).toMatch(/^destination port \d+ is not allowed/);
    },
  );
});

describe('parseDestinationUrl: host normalisation (WHATWG canonicalisation relied upon)', () => {
  it.each<[string, string, 'ipv4' | 'ipv6' | 'name']>([
    ['https://example.com/', 'example.com', 'name'],
    ['https://EXAMPLE.COM/Path', 'example.com', 'name'],
    ['HTTPS://Example.Com/', 'example.com', 'name'],
    ['https://example.com./', 'example.com', 'name'],
    ['https://LOCALHOST./', 'localhost', 'name'],
    ['https://metadata.google.internal./', 'metadata.google.internal', 'name'],
    ['https://ｌｏｃａｌｈｏｓｔ/', 'localhost', 'name'],
    ['https://exa%6dple.com/', 'example.com', 'name'],
    ['https://example.com\u3002/', 'example.com', 'name'],
    ['https://bücher.example/', 'xn--bcher-kva.example', 'name'],
    ['https:///example.com/', 'example.com', 'name'],
    ['https:\\\\example.com\\x', 'example.com', 'name'],
    // IPv4 encodings, all canonicalised to dotted quad by WHATWG URL
    ['https://127.0.0.1/', '127.0.0.1', 'ipv4'],
    ['https://2130706433/', '127.0.0.1', 'ipv4'],
    ['https://0x7f000001/', '127.0.0.1', 'ipv4'],
    ['https://017700000001/', '127.0.0.1', 'ipv4'],
    ['https://0x7f.1/', '127.0.0.1', 'ipv4'],
    ['https://127.1/', '127.0.0.1', 'ipv4'],
    ['https://0177.0.0.1/', '127.0.0.1', 'ipv4'],
    ['https://0x7f.0x0.0x0.0x1/', '127.0.0.1', 'ipv4'],
    ['https://１２７.０.０.１/', '127.0.0.1', 'ipv4'],
    ['https://%31%32%37.0.0.1/', '127.0.0.1', 'ipv4'],
    ['https://127.0.0.1./', '127.0.0.1', 'ipv4'],
    ['https://0/', '0.0.0.0', 'ipv4'],
    ['https://0xa9fea9fe/', '169.254.169.254', 'ipv4'],
    ['https://10.1/', '10.0.0.1', 'ipv4'],
    // IPv6: brackets stripped, compressed by WHATWG
    ['https://[::1]/', '::1', 'ipv6'],
    ['https://[::]/', '::', 'ipv6'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1', 'ipv6'],
    ['https://[0:0:0:0:0:ffff:a00:1]/', '::ffff:a00:1', 'ipv6'],
    ['https://[2606:4700:4700:0:0:0:0:1111]/', '2606:4700:4700::1111', 'ipv6'],
    ['https://[2A00:1450:4001::200E]/', '2a00:1450:4001::200e', 'ipv6'],
  ])('%s → %s (%s)', (raw, host, hostKind) => {
    const parsed = parseDestinationUrl(raw, STD);
    expect(parsed.host).toBe(host);
    expect(parsed.hostKind).toBe(hostKind);
    expect(parsed.url.protocol).toBe('https:');
  });

  it('rewrites the URL without the trailing dot so Host/SNI match the checked name', () => {
    expect(parseDestinationUrl('https://Example.com.:8443/a?b#c', ANY_PORT).url.href).toBe('https://example.com:8443/a?b#c');
  });

  it('a "#@" or "\\@" trick does not change the host', () => {
    expect(parseDestinationUrl('https://example.com#@127.0.0.1/', STD).host).toBe('example.com');
    expect(parseDestinationUrl('https://example.com\\@127.0.0.1/', STD).host).toBe('example.com');
  });
});

describe('normaliseHost', () => {
  it.each<[string, string]>([
    ['Example.COM', 'example.com'],
    ['example.com.', 'example.com'],
    ['[::1]', '::1'],
    ['[FE80::1]', 'fe80::1'],
    ['127.0.0.1', '127.0.0.1'],
  ])('%s → %s', (input, output) => {
    expect(normaliseHost(input)).toBe(output);
  });
});
