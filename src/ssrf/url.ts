import { isIP } from 'node:net';
import { AppError } from '../common/errors';

export const MAX_URL_LENGTH = 2048;
export const DEFAULT_HTTPS_PORT = 443;

export interface UrlCheckOptions {
  /** Per-webhook flag: permit ports other than 443 (1–65535). */
  allowNonstandardPort: boolean;
}

export interface ParsedDestinationUrl {
  /** Canonical WHATWG URL (host normalised, trailing dot removed). Send requests to this. */
  url: URL;
  /** Normalised host: lower case, no trailing dot, IPv6 without brackets. */
  host: string;
  /** Effective port (443 when the URL has none). */
  port: number;
  hostKind: 'ipv4' | 'ipv6' | 'name';
}

// C0/C1 controls, DEL, and every Unicode space/line separator. WHATWG would silently strip
// some of these (tabs, newlines, leading/trailing spaces) and reject others; refusing them
// all up front means the string the user sees is the string we check.
// eslint-disable-next-line no-control-regex
const WHITESPACE_OR_CONTROL = /[\u0000-\u0020\u007f-\u00a0\u00ad\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u3000\ufeff]/u;

function invalid(message: string): AppError {
  return new AppError('VALIDATION_ERROR', message);
}

/**
 * Lower-cases, strips IPv6 brackets and one trailing dot ("example.com." is the same DNS
 * name as "example.com"). Used for URL hosts and by the pinned connector, so both sides
 * compare the same string.
 */
export function normaliseHost(hostname: string): string {
  let host = hostname.toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}

/** The effective port of an https URL ('' means the default, 443). */
export function effectivePort(url: URL): number {
  return url.port === '' ? DEFAULT_HTTPS_PORT : Number(url.port);
}

/**
 * Validates the shape of a webhook URL. Throws:
 * - VALIDATION_ERROR (400) "url must ..." for shape problems;
 * - WEBHOOK_DESTINATION_BLOCKED (422) for a non-standard port without the flag.
 * Does not look at addresses; SsrfPolicy does that.
 */
export function parseDestinationUrl(raw: unknown, opts: UrlCheckOptions): ParsedDestinationUrl {
  if (typeof raw !== 'string') throw invalid('url must be a string');
  if (raw.length === 0) throw invalid('url must not be empty');
  if (raw.length > MAX_URL_LENGTH) throw invalid(`url must be at most ${MAX_URL_LENGTH} characters`);
  if (WHITESPACE_OR_CONTROL.test(raw)) throw invalid('url must not contain whitespace or control characters');

  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url must be a valid absolute https URL');
  }
  if (url.protocol !== 'https:') throw invalid('url must use the https scheme');

  // WHATWG drops an empty userinfo ("https://@host/"); refuse any "@" in the authority too,
  // so nobody can rely on parser differences between us and a downstream component.
  if (url.username !== '' || url.password !== '' || authorityOf(raw).includes('@')) {
    throw invalid('url must not contain user credentials');
  }

  const host = normaliseHost(url.hostname);
  const hostKind = isIP(host) === 4 ? 'ipv4' : isIP(host) === 6 ? 'ipv6' : 'name';
  if (hostKind === 'name' && !isPlausibleHostname(host)) {
    throw invalid('url must have a valid host name');
  }
  if (hostKind === 'name' && url.hostname !== host) {
    // Drop the trailing dot so Host, SNI and the pinned lookup all see one name.
    url.hostname = host;
  }

  const port = effectivePort(url);
  if (port < 1 || port > 65535) throw invalid('url must have a port between 1 and 65535');
  if (port !== DEFAULT_HTTPS_PORT && !opts.allowNonstandardPort) {
    throw new AppError(
      'WEBHOOK_DESTINATION_BLOCKED',
      `destination port ${port} is not allowed: only port 443 unless the webhook allows non-standard ports`,
    );
  }

  if (url.href.length > MAX_URL_LENGTH) {
    // Percent-encoding/IDNA can grow the URL past the limit after parsing.
    throw invalid(`url must be at most ${MAX_URL_LENGTH} characters`);
  }
  return { url, host, port, hostKind };
}

/** The raw text between "scheme:" + slashes and the first path/query/fragment delimiter. */
function authorityOf(raw: string): string {
  const rest = raw.replace(/^[a-zA-Z][a-zA-Z0-9+.-]*:[/\\]*/, '');
  const end = rest.search(/[/\\?#]/);
  return end === -1 ? rest : rest.slice(0, end);
}

function isPlausibleHostname(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  return host.split('.').every((label) => label.length > 0 && label.length <= 63);
}
